"""Test-only ironic driver interfaces for the mini cloud.

Ironic's stock ``fake`` BIOS and RAID interfaces only offer clean steps, so a
deploy template or a servicing request naming ``bios.apply_configuration`` is
accepted and then silently skipped.  These subclasses keep the fake behaviour
(BIOS settings land in ironic's ``bios_settings`` table, RAID in
``node.raid_config``) and expose it as deploy and service steps, so that the
effect of a template can be read back from the API.

Never shipped: the mini cloud installs it into its own virtualenv.
"""
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
_BIOS_ARGS = {'settings': {'description': 'A list of {"name", "value"} dicts',
                           'required': True}}


class StepsBIOS(fake.FakeBIOS):
    """Fake BIOS whose configuration steps also run at deploy and service."""

    @_service_step(priority=0, argsinfo=_BIOS_ARGS,
                       requires_ramdisk=False)
    @base.deploy_step(priority=0, argsinfo=_BIOS_ARGS)
    @base.clean_step(priority=0, argsinfo=_BIOS_ARGS, requires_ramdisk=False)
    def apply_configuration(self, task, settings):
        if task.node.extra.get(IGNORES_STEPS):
            return None     # as a BIOS that ignores what it is told
        return super().apply_configuration(task, settings)

    @_service_step(priority=0, requires_ramdisk=False)
    @base.deploy_step(priority=0)
    @base.clean_step(priority=0, requires_ramdisk=False)
    def factory_reset(self, task):
        return super().factory_reset(task)


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
