"""Test-only ironic driver interfaces for the mini cloud.

Ironic's stock ``fake`` BIOS and RAID interfaces only offer clean steps, so a
deploy template or a servicing request naming ``bios.apply_configuration`` is
accepted and then silently skipped.  These subclasses keep the fake behaviour
(BIOS settings land in ironic's ``bios_settings`` table, RAID in
``node.raid_config``) and expose it as deploy and service steps, so that the
effect of a template can be read back from the API.

The BIOS also publishes a registry (``GET /v1/nodes/{node}/bios?detail=True``
shows it), as real hardware does through Redfish, and refuses a setting its
registry lacks, as a BMC does.  A node's kind (its extra
``minicloud_bios_kind``) picks the registry, for two vendors' names of the
same settings: ``REGISTRIES`` below.

Never shipped: the mini cloud installs it into its own virtualenv.
"""
import time

from ironic import objects
from ironic.common import exception
from ironic.common import raid
from ironic.drivers import base
from ironic.drivers.modules import fake


def _no_servicing(**kwargs):
    """An ironic before servicing (API 1.87) has no service steps."""
    return lambda method: method


_service_step = getattr(base, 'service_step', _no_servicing)
# A node whose extra says so has a BIOS that ignores the settings it is
# given: the step succeeds and nothing changes (the tests' broken hardware).
IGNORES_STEPS = 'minicloud_bios_ignores_steps'
# A node whose extra says so has a BIOS that fails the settings it is
# given: the step fails with this error, and nothing changes.
FAILS_STEPS = 'minicloud_bios_fails_steps'
# A node whose extra says so has a BIOS that takes this many seconds over
# the settings it is given (the tests' slow hardware: a servicing lasts).
SLOW_STEPS = 'minicloud_bios_slow_steps'
_BIOS_ARGS = {'settings': {'description': 'A list of {"name", "value"} dicts',
                           'required': True}}


# The BIOS registries: each setting's default value and registry fields.
_FIELDS = ('attribute_type', 'allowable_values', 'lower_bound',
           'upper_bound', 'min_length', 'max_length', 'read_only',
           'reset_required', 'unique')
_SWITCH = {'attribute_type': 'Enumeration',
           'allowable_values': ['Enabled', 'Disabled']}
_SERIAL = ('MINICLOUD-0001', {'attribute_type': 'String', 'read_only': True,
                              'max_length': 32})
# A node's kind, from its extra; "a" by default.
KIND = 'minicloud_bios_kind'
REGISTRIES = {
    'a': {
        'HyperThreading': ('Enabled', _SWITCH),
        'BootDelay': ('5', {'attribute_type': 'Integer', 'lower_bound': 0,
                            'upper_bound': 60}),
        'SerialNumber': _SERIAL,
        # Free-form settings the functional tests and the bench set to
        # values of their own.
        'FnToggle': ('none', {'attribute_type': 'String',
                              'max_length': 32}),
        'BenchFleet': ('none', {'attribute_type': 'String',
                                'max_length': 32}),
    },
    # a second vendor's names (HPE iLO's) for the same switches; its
    # hyperthreading starts disabled, so that a deploy shows it enabled
    'b': {
        'ProcHyperthreading': ('Disabled', _SWITCH),
        'ProcVirtualization': ('Enabled', _SWITCH),
        'Sriov': ('Disabled', _SWITCH),
        'SerialNumber': _SERIAL,
    },
    # a Dell iDRAC's names, and its default system profile
    'c': {
        'LogicalProc': ('Enabled', _SWITCH),
        'ProcVirtualization': ('Enabled', _SWITCH),
        'SriovGlobalEnable': ('Enabled', _SWITCH),
        'ProcTurboMode': ('Enabled', _SWITCH),
        'SysProfile': ('PerfPerWattOptimizedDapc', {
            'attribute_type': 'Enumeration',
            'allowable_values': ['PerfPerWattOptimizedDapc',
                                 'PerfPerWattOptimizedOs', 'PerfOptimized',
                                 'Custom']}),
        'SerialNumber': _SERIAL,
    },
}
# Settings a profile locks, by kind: {setting: (profile, the value that
# unlocks it)}, as the Dell registry's Dependencies say.
LOCKS = {'c': {'ProcTurboMode': ('SysProfile', 'Custom')}}


def kind_of(node):
    return node.extra.get(KIND) or 'a'


def registry_of(node):
    return REGISTRIES[kind_of(node)]


def _with_registry(registry, setting, values=None, locks=None):
    """A setting with its registry fields; ``read_only`` live for one a
    profile locks (``values``: the BIOS's values then)."""
    fields = dict(registry.get(setting['name'], (None, {}))[1])
    lock = (locks or {}).get(setting['name'])
    if lock and values is not None:
        fields['read_only'] = values.get(lock[0]) != lock[1]
    return dict({f: fields.get(f) for f in _FIELDS}, name=setting['name'],
                value=setting['value'])


def _locked(node, have, settings):
    """The settings a profile refuses: those that change a locked setting
    while its profile is neither unlocked nor unlocked by ``settings``."""
    wanted = {s['name']: s['value'] for s in settings}
    return ['%s (read-only while %s is %s)' % (name, profile, have.get(
        profile)) for name, (profile, unlock) in sorted(
            LOCKS.get(kind_of(node), {}).items())
            if name in wanted and wanted[name] != have.get(name)
            and unlock not in (have.get(profile), wanted.get(profile))]


def _sync(task, settings):
    """Store ``settings`` (with their registry fields) in ironic's table."""
    node_id = task.node.id
    have = {s.name: s for s in objects.BIOSSettingList.get_by_node_id(
        task.context, node_id)}
    create = [s for s in settings if s['name'] not in have]
    update = [s for s in settings if s['name'] in have and any(
        getattr(have[s['name']], f) != s[f] for f in ('value',) + _FIELDS)]
    if create:
        objects.BIOSSettingList.create(task.context, node_id, create)
    if update:
        objects.BIOSSettingList.save(task.context, node_id, update)


class StepsBIOS(fake.FakeBIOS):
    """Fake BIOS whose configuration steps also run at deploy and service,
    with a registry."""

    @_service_step(priority=0, argsinfo=_BIOS_ARGS,
                       requires_ramdisk=False)
    @base.deploy_step(priority=0, argsinfo=_BIOS_ARGS)
    @base.clean_step(priority=0, argsinfo=_BIOS_ARGS, requires_ramdisk=False)
    def apply_configuration(self, task, settings):
        # a slow BIOS takes its time, then fails or takes the settings
        time.sleep(float(task.node.extra.get(SLOW_STEPS) or 0))
        if task.node.extra.get(FAILS_STEPS):
            raise exception.DriverOperationError(
                'BIOS refused the settings: %s' % task.node.extra[FAILS_STEPS])
        registry = registry_of(task.node)
        unknown = sorted(s['name'] for s in settings
                         if s['name'] not in registry)
        if unknown:     # as a BMC refuses what its registry lacks
            raise exception.DriverOperationError(
                'BIOS refused the settings: no attribute %s in its registry'
                % ', '.join(unknown))
        locked = _locked(task.node, self._values(task), settings)
        if locked:      # as an iDRAC refuses what its profile governs
            raise exception.DriverOperationError(
                'BIOS refused the settings: %s' % ', '.join(locked))
        if task.node.extra.get(IGNORES_STEPS):
            return None     # as a BIOS that ignores what it is told
        _sync(task, [_with_registry(registry, s) for s in settings])
        self.cache_bios_settings(task)  # the locks follow the profile

    @_service_step(priority=0, requires_ramdisk=False)
    @base.deploy_step(priority=0)
    @base.clean_step(priority=0, requires_ramdisk=False)
    def factory_reset(self, task):
        super().factory_reset(task)
        self.cache_bios_settings(task)

    @staticmethod
    def _values(task):
        """The BIOS's values: what ironic holds, else each default."""
        have = {s.name: s.value for s in objects.BIOSSettingList
                .get_by_node_id(task.context, task.node.id)}
        return {name: have.get(name, default)
                for name, (default, _) in registry_of(task.node).items()}

    def cache_bios_settings(self, task):
        """What ironic reads of the BIOS (at verify, cleaning, servicing):
        every registry setting, at its current value or its default, and
        read-only where a profile locks it now."""
        registry = registry_of(task.node)
        values = self._values(task)
        locks = LOCKS.get(kind_of(task.node))
        _sync(task, [_with_registry(registry, {
            'name': name, 'value': value}, values, locks)
            for name, value in values.items()])


class StepsRAID(fake.FakeRAID):
    """Fake RAID whose configuration is recorded as if a controller did it."""

    @_service_step(priority=0,
                       argsinfo=base.RAID_APPLY_CONFIGURATION_ARGSINFO,
                       requires_ramdisk=False)
    @base.deploy_step(priority=0,
                      argsinfo=base.RAID_APPLY_CONFIGURATION_ARGSINFO)
    def apply_configuration(self, task, raid_config, create_root_volume=True,
                            create_nonroot_volumes=True,
                            delete_existing=True):
        return super().apply_configuration(
            task, raid_config, create_root_volume=create_root_volume,
            create_nonroot_volumes=create_nonroot_volumes,
            delete_existing=delete_existing)

    def create_configuration(self, task, create_root_volume=True,
                             create_nonroot_volumes=True,
                             delete_existing=True):
        raid.update_raid_info(task.node, task.node.target_raid_config)

    @_service_step(priority=0, requires_ramdisk=False)
    @base.deploy_step(priority=0)
    @base.clean_step(priority=0, requires_ramdisk=False)
    def delete_configuration(self, task):
        task.node.raid_config = {}
        task.node.save()
