#   Licensed under the Apache License, Version 2.0 (the "License"); you may
#   not use this file except in compliance with the License. You may obtain
#   a copy of the License at
#
#        http://www.apache.org/licenses/LICENSE-2.0
#
#   Unless required by applicable law or agreed to in writing, software
#   distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#   WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#   License for the specific language governing permissions and limitations
#   under the License.

"""Run one emulated BMC: sushy-tools' own app and server, with our systems
driver, and what its templates lack added to its responses.

    launcher.py --port P --state-dir DIR --vendor dell|hpe \
        --system NAME=UUID [--power-delay S] [--boot-delay S]
        [--no-boot-progress]

One BMC per server, as in a data centre: the BIOS registry the emulator
serves (one per app, at a fixed URL) is then the registry of its one
system, with Dell's ReadOnly flags evaluated live from that system's
values.  Listens on loopback, without credentials.
"""

import argparse
import json
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
import flask  # noqa: E402
from sushy_tools.emulator import main  # noqa: E402

from bmc import driver  # noqa: E402
from bmc import model  # noqa: E402


def _rewrite(response, change):
    """Edit a JSON response of the stock app in place."""
    body = json.loads(response.get_data())
    change(body)
    response.set_data(json.dumps(body, indent=2))
    return response


def _bios_state(identity):
    return main.app.systems.get_bios_state(identity)


def _system(identity, body):
    if main.app.config.get('MINICLOUD_BMC_BOOT_PROGRESS', True):
        body['BootProgress'] = {
            'LastState': main.app.systems.get_boot_progress(identity)}
    # what the tests read: the resets asked, and whether the OS ran then
    body.setdefault('Oem', {})['Minicloud'] = {
        'Resets': main.app.systems.get_resets(identity),
        'Disk': main.app.systems.get_disk(identity),
        'PreconditionsFailed': main.app.systems.get_preconditions_failed(
            identity)}


def _bios(identity, body):
    """The vendor's apply times (sushy asks for OnReset where they list
    it: iDRAC; the iLO lists none) and, as the iLO, ETags: the settings'
    is the current values' (what sushy sends as ``If-Match``)."""
    bios = _bios_state(identity)
    body['AttributeRegistry'] = model.registry_id(bios['vendor'])
    settings = body.setdefault('@Redfish.Settings', {})
    settings.pop('SupportedApplyTimes', None)
    if model.apply_times(bios['vendor']):
        settings['SupportedApplyTimes'] = model.apply_times(bios['vendor'])
    settings['Messages'] = bios['messages']
    if model.uses_etags(bios['vendor']):
        tag = model.etag(bios['current'])
        body['@odata.etag'] = 'W/' + tag
        settings['ETag'] = tag.strip('"')


def _settings_etag(bios):
    return 'W/' + model.etag(model.settings_view(bios))


def _bios_settings(identity, body):
    bios = _bios_state(identity)
    body['AttributeRegistry'] = model.registry_id(bios['vendor'])
    body['Attributes'] = model.settings_view(bios)
    if model.uses_etags(bios['vendor']):
        body['@odata.etag'] = _settings_etag(bios)


def _manager(identity, body):
    """An iDRAC's manager names its Dell job service (sushy-oem-idrac
    finds it there)."""
    if _bios_state(_system_id())['vendor'] != 'dell':
        return
    body.setdefault('Oem', {})['Dell'] = {
        '@odata.type': '#DellOem.v1_3_0.DellOemResources'}
    body.setdefault('Links', {})['Oem'] = {'Dell': {'DellJobService': {
        '@odata.id': flask.request.path + '/Oem/Dell/DellJobService'}}}


def _system_id():
    """The one system of this BMC."""
    return main.app.systems.systems[0]


def _job_refusal(identity):
    """As the iDRAC: a change while a configuration job is scheduled is
    refused (SYS011)."""
    message = model.job_refusal(_bios_state(identity))
    if message is None:
        return None
    return flask.jsonify(error={
        'code': 'Base.1.12.GeneralError',
        'message': 'A general error has occurred. See ExtendedInfo for '
                   'more information',
        '@Message.ExtendedInfo': [message]}), 400


def _precondition(identity):
    """As the iLO: a change of the BIOS settings whose ``If-Match`` is
    not their ETag is refused (412); one without is taken."""
    bios = _bios_state(identity)
    match = flask.request.headers.get('If-Match')
    if not (model.uses_etags(bios['vendor']) and match):
        return None
    if match in (_settings_etag(bios), _settings_etag(bios)[2:]):
        return None
    main.app.systems.refuse_precondition(identity)
    return flask.jsonify(error={
        'code': 'Base.1.4.PreconditionFailed',
        'message': 'The ETag supplied did not match the ETag required to '
                   'change this resource.'}), 412


def _registry(body):
    """The registry of this BMC's system, in place of the stock one."""
    first = main.app.systems.systems[0]
    body.clear()
    body.update(model.live_registry(_bios_state(first)))
    body['@odata.id'] = flask.request.path


def add_extensions(app):
    """After each stock response: BootProgress, apply times, messages,
    pending settings, ETags and our registry; before a change of the BIOS
    settings, the iLO's check of its ``If-Match``."""
    by_endpoint = {'system_resource': _system, 'bios': _bios,
                   'bios_settings': _bios_settings,
                   'manager_resource': _manager}

    @app.route('/redfish/v1/Systems/<identity>/Actions/Oem/'
               'Minicloud.SetDisk', methods=['POST'])
    def set_disk(identity):
        """What the disk holds from the next boot on (the tests: a blank
        disk, an OS installed): ``{"Disk": "Blank"}`` or ``"OS"``."""
        contents = (flask.request.get_json(force=True) or {}).get('Disk')
        if contents not in (driver.BLANK, 'OS'):
            return flask.jsonify(error='Disk: Blank or OS'), 400
        app.systems.set_disk(identity, contents)
        return '', 204

    @app.route('/redfish/v1/Managers/<identity>/Oem/Dell/DellJobService')
    def dell_job_service(identity):
        path = flask.request.path
        return flask.jsonify({
            '@odata.id': path, 'Id': 'Job Service',
            'Actions': {'#DellJobService.DeleteJobQueue': {
                'target': path + '/Actions/DellJobService.DeleteJobQueue'}}})

    @app.route('/redfish/v1/Managers/<identity>/Oem/Dell/DellJobService/'
               'Actions/DellJobService.DeleteJobQueue', methods=['POST'])
    def delete_job_queue(identity):
        """JID_CLEARALL: every job of the BMC's system, and its pending
        settings, deleted."""
        if (flask.request.get_json(force=True) or {}).get(
                'JobID') != 'JID_CLEARALL':
            return flask.jsonify(error='JobID: only JID_CLEARALL'), 400
        app.systems.clear_job_queue(_system_id())
        return '', 200

    @app.before_request
    def check_change():
        """The iLO's ETag check and the iDRAC's job queue, before a change
        of the BIOS settings."""
        if (flask.request.method != 'PATCH'
                or flask.request.endpoint != 'bios_settings'):
            return None
        identity = flask.request.view_args['identity']
        return _precondition(identity) or _job_refusal(identity)

    @app.after_request
    def make_job(response):
        """A change asked ``OnReset`` of an iDRAC becomes a job."""
        body = (flask.request.get_json(silent=True) or {}) if (
            flask.request.method == 'PATCH') else {}
        if (flask.request.endpoint == 'bios_settings'
                and response.status_code < 300
                and body.get('@Redfish.SettingsApplyTime', {}).get(
                    'ApplyTime') == 'OnReset'
                and _bios_state(flask.request.view_args['identity'])[
                    'vendor'] == 'dell'):
            app.systems.schedule_job(flask.request.view_args['identity'])
        return response

    @app.after_request
    def extend(response):
        if (flask.request.method != 'GET' or response.status_code != 200
                or response.mimetype != 'application/json'):
            return response
        endpoint = flask.request.endpoint
        if endpoint == 'bios_registry':
            return _rewrite(response, _registry)
        if endpoint in by_endpoint:
            identity = flask.request.view_args['identity']
            _rewrite(response, lambda body: by_endpoint[endpoint](
                identity, body))
            etag = json.loads(response.get_data()).get('@odata.etag')
            if etag:
                response.headers['ETag'] = etag
        return response


def parse_args(argv):
    parser = argparse.ArgumentParser('minicloud-bmc')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--vendor', choices=model.VENDORS, required=True)
    parser.add_argument('--system', required=True, help='NAME=UUID')
    parser.add_argument('--power-delay', type=float, default=1.0)
    parser.add_argument('--boot-delay', type=float, default=1.0)
    # without BootProgress, ironic 39 waits for a refused BIOS set only
    # until its callback timeout; with it, for ever (README.md)
    parser.add_argument('--no-boot-progress', action='store_true')
    return parser.parse_args(argv)


def main_(argv):
    args = parse_args(argv)
    name, uuid = args.system.split('=', 1)
    os.makedirs(args.state_dir, exist_ok=True)
    app = main.app
    app.config.update({
        'SUSHY_EMULATOR_STATE_DIR': args.state_dir,
        'SUSHY_EMULATOR_FAKE_SYSTEMS': [{
            'uuid': uuid, 'name': name, 'power_state': 'Off',
            'vendor': args.vendor, 'external_notifier': False,
            'nics': [{'mac': '52:54:00:00:00:%02x' % (args.port % 256),
                      'ip': '127.0.0.1'}]}],
        'MINICLOUD_BMC_POWER_DELAY': args.power_delay,
        'MINICLOUD_BMC_BOOT_DELAY': args.boot_delay,
        'MINICLOUD_BMC_BOOT_PROGRESS': not args.no_boot_progress,
    })
    # sushy-tools picks its fake driver by this module's name
    main.fakedriver = types.SimpleNamespace(FakeDriver=driver.BmcDriver)
    add_extensions(app)
    sys.argv = ['sushy-emulator', '--interface', '127.0.0.1', '--port',
                str(args.port), '--fake']
    return main.main()


if __name__ == '__main__':
    sys.exit(main_(sys.argv[1:]))
