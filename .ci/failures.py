"""Print what failed in an stestr repository's last run: the end of the
tracebacks of the first few failing tests, then, last, every failing
test's ID with its short details (a chaos seed).  CI shows the tail of
its output, and the ID alone says nothing of why."""
import io
import os
import subprocess
import sys

import subunit
import testtools

DETAILED = 5            # tests whose traceback is shown
TRACEBACK_LINES = 25
LINE = 400
LISTED = 30             # tests listed by ID
SHORT_DETAIL = 200


def failures(repo):
    """[{id, details: {name: text}}] of the failing tests of the last
    run."""
    stream = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'stestr'),
         '--repo-url', repo, 'last', '--subunit'],
        capture_output=True, check=False).stdout
    found = []

    def keep(test):
        if test['status'] == 'fail':
            found.append({'id': test['id'], 'details': {
                name: b''.join(content.iter_bytes()).decode(
                    'utf-8', 'replace')
                for name, content in test['details'].items()}})

    result = testtools.StreamToDict(keep)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(
        io.BytesIO(stream), non_subunit_name='stdout').run(result)
    result.stopTestRun()
    return found


def main(repo):
    failed = failures(repo)
    for test in failed[:DETAILED]:
        print('---- %s' % test['id'])
        lines = test['details'].get('traceback', '').rstrip().splitlines()
        frames = [n for n, line in enumerate(lines)
                  if line.startswith('  File ') and '/tests/' in line]
        if frames and frames[-1] < len(lines) - TRACEBACK_LINES:
            # where in the test, above a long message
            print('\n'.join(lines[frames[-1]:frames[-1] + 2] + ['...']))
        print('\n'.join(line[:LINE] for line in lines[-TRACEBACK_LINES:]))
    if len(failed) > DETAILED:
        print('(and %d more tracebacks)' % (len(failed) - DETAILED))
    print('---- failed: %d' % len(failed))
    for test in failed[:LISTED]:
        short = ', '.join(
            '%s: %s' % (name, text.strip())
            for name, text in sorted(test['details'].items())
            if name != 'traceback' and len(text) <= SHORT_DETAIL)
        print(test['id'] + (' (%s)' % short if short else ''))
    if len(failed) > LISTED:
        print('(and %d more)' % (len(failed) - LISTED))


if __name__ == '__main__':
    main(sys.argv[1])
