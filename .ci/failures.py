"""Print, for each test that failed in an stestr repository's last run,
its short details (a chaos seed) and the end of its traceback: CI shows
the tail of its output, and the test list alone says nothing of why."""
import io
import os
import subprocess
import sys

import subunit
import testtools

TRACEBACK_LINES = 25
LINE = 400
SHORT_DETAIL = 200


def failures(repo):
    stream = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'stestr'),
         '--repo-url', repo, 'last', '--subunit'],
        capture_output=True, check=False).stdout
    found = []

    def keep(test):
        if test['status'] == 'fail':
            found.append(test)

    result = testtools.StreamToDict(keep)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(
        io.BytesIO(stream), non_subunit_name='stdout').run(result)
    result.stopTestRun()
    return found


def main(repo):
    for test in failures(repo):
        print('---- %s' % test['id'])
        details = {name: content.as_text()
                   for name, content in test['details'].items()}
        for name, text in sorted(details.items()):
            if name != 'traceback' and len(text) <= SHORT_DETAIL:
                print('%s: %s' % (name, text.strip()))
        lines = details.get('traceback', '').rstrip().splitlines()
        print('\n'.join(line[:LINE] for line in lines[-TRACEBACK_LINES:]))


if __name__ == '__main__':
    main(sys.argv[1])
