"""Seed the mini cloud; runs inside its virtualenv (needs openstacksdk).

    seed.py keystone KEYSTONE_URL PASSWORD REGION TYPE=URL...
        service projects, users, roles and the catalog (after bootstrap)
    seed.py cloud NOVA-MANAGE-ARGV...
        ironic nodes, flavors and image; returns once nova can schedule them
        (OS_CLIENT_CONFIG_FILE names the mini cloud's clouds.yaml;
        MINICLOUD_REDFISH, as JSON, each Redfish node's BMC address and
        system ID)

Every step finds before it creates, so a rerun changes nothing.
"""
import json
import os
import sys
import time
import uuid
import warnings

warnings.filterwarnings('ignore')
import openstack  # noqa: E402
from waiting import TimedOut  # noqa: E402
from waiting import wait_for  # noqa: E402

SERVICE_NAMES = {'compute': 'nova', 'placement': 'placement',
                 'image': 'glance', 'baremetal': 'ironic',
                 'network': 'neutron'}
# nova and ironic also need 'admin' on project service: glance hides images
# from 'service'-only tokens, and nova's external events API only finds
# instances of other projects for admin contexts.
ADMIN_SERVICE_USERS = ('nova', 'ironic')

GOLD, SILVER = 'baremetal-gold', 'baremetal-silver'
COPPER, BRONZE = 'baremetal-copper', 'baremetal-bronze'
NODE_PROPERTIES = {'cpus': 4, 'memory_mb': 8192, 'local_gb': 40,
                   'cpu_arch': 'x86_64'}
NODES = {  # name: (traits, maintenance, resource class, fake BIOS kind;
    #                None: on Redfish, over its emulated BMC)
    'bm-0': (['HW_CPU_HYPERTHREADING'], False, GOLD, 'a'),
    'bm-1': (['HW_CPU_HYPERTHREADING'], False, GOLD, 'a'),
    'bm-2': ([], False, GOLD, 'a'),
    'bm-3': (['HW_CPU_HYPERTHREADING'], True, GOLD, 'a'),
    # another vendor's hardware: its BIOS names its settings its own way
    'bm-4': (['HW_CPU_HYPERTHREADING'], False, SILVER, 'b'),
    # a Dell R750's BIOS behind an emulated iDRAC: its system profile
    # locks turbo
    'bm-5': (['HW_CPU_HYPERTHREADING'], False, COPPER, None),
    # an HPE DL385 Gen10 Plus v2's (AMD) behind an emulated iLO
    'bm-6': (['HW_CPU_HYPERTHREADING'], False, BRONZE, None),
}
_BAREMETAL = {'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
              'resources:DISK_GB': '0'}
FLAVORS = {
    'bm.gold': ({'vcpus': 4, 'ram': 8192, 'disk': 40}, dict(
        _BAREMETAL, **{'resources:CUSTOM_BAREMETAL_GOLD': '1'})),
    'bm.silver': ({'vcpus': 4, 'ram': 8192, 'disk': 40}, dict(
        _BAREMETAL, **{'resources:CUSTOM_BAREMETAL_SILVER': '1'})),
    'bm.copper': ({'vcpus': 4, 'ram': 8192, 'disk': 40}, dict(
        _BAREMETAL, **{'resources:CUSTOM_BAREMETAL_COPPER': '1'})),
    'bm.bronze': ({'vcpus': 4, 'ram': 8192, 'disk': 40}, dict(
        _BAREMETAL, **{'resources:CUSTOM_BAREMETAL_BRONZE': '1'})),
    'm1.tiny': ({'vcpus': 1, 'ram': 512, 'disk': 1}, {}),
}
IMAGE = 'tiny'


def log(msg, since):
    print('  %-40s %6.2fs' % (msg, time.monotonic() - since), flush=True)


def seed_keystone(url, password, region, endpoints):
    t0 = time.monotonic()
    conn = openstack.connect(
        auth_url=url + '/v3', username='admin', password=password,
        project_name='admin', user_domain_name='Default',
        project_domain_name='Default', region_name=region,
        identity_api_version='3')
    idn = conn.identity
    domain = idn.find_domain('default', ignore_missing=False)

    def role(name):
        return idn.find_role(name) or idn.create_role(name=name)

    def project(name):
        return (idn.find_project(name, domain_id=domain.id)
                or idn.create_project(name=name, domain_id=domain.id))

    def user(name, home):
        return (idn.find_user(name, domain_id=domain.id)
                or idn.create_user(name=name, password=password,
                                   domain_id=domain.id,
                                   default_project_id=home.id))

    roles = {name: role(name)
             for name in ('admin', 'manager', 'member', 'reader', 'service')}
    service, demo, other = project('service'), project('demo'), project(
        'other')
    for name in SERVICE_NAMES.values():
        account = user(name, service)
        idn.assign_project_role_to_user(service, account, roles['service'])
        if name in ADMIN_SERVICE_USERS:
            idn.assign_project_role_to_user(service, account, roles['admin'])
        if name == 'nova':
            # an ironic older than rbac_service_role_elevated_access
            # shows nodes to a system-scoped service only
            idn.assign_system_role_to_user(account, roles['service'], 'all')
    # a member of demo; a manager of demo, who may service the nodes its
    # servers run on (ironic: the node's lessee) through its runbooks; a
    # manager of another project, who may not
    for account, home, role_name in (('demo', demo, 'member'),
                                     ('demo-manager', demo, 'manager'),
                                     ('other-manager', other, 'manager')):
        idn.assign_project_role_to_user(home, user(account, home),
                                        roles[role_name])
    for stype, endpoint_url in endpoints.items():
        svc = next((s for s in idn.services() if s.type == stype), None) or \
            idn.create_service(name=SERVICE_NAMES[stype], type=stype)
        have = {e.interface for e in idn.endpoints(service_id=svc.id)}
        for interface in ('public', 'internal'):
            if interface not in have:
                idn.create_endpoint(service_id=svc.id, interface=interface,
                                    url=endpoint_url, region_id=region)
    log('keystone users, roles, catalog', t0)


def node_uuid(name):
    """A node's UUID, the same in every mini cloud: a node enrolled again
    in a fresh ironic database (``minicloud up --ironic-release``) is the
    node nova already knows, with its resource provider."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, 'minicloud:node:' + name))


# A Redfish node's management interface, where not ``redfish``: the
# iDRAC's own, whose clear_job_queue step deletes its configuration jobs.
MANAGEMENT = {'bm-5': 'idrac-redfish'}


def node_interfaces(name, kind, redfish):
    """A fake-steps node's BIOS and RAID; or Redfish power, management
    and BIOS over the node's emulated BMC (``redfish``: node -> (address,
    system ID)), with fake deploy, boot and network all the same."""
    if kind:
        return {'bios_interface': 'fake-steps',
                'raid_interface': 'fake-steps',
                'extra': {'minicloud_bios_kind': kind}}
    address, system_id = redfish[name]
    return {'bios_interface': 'redfish', 'power_interface': 'redfish',
            'management_interface': MANAGEMENT.get(name, 'redfish'),
            'driver_info': {'redfish_address': address,
                            'redfish_system_id': system_id,
                            # the emulator takes any credentials
                            'redfish_username': 'minicloud',
                            'redfish_password': 'minicloud',
                            # ironic 39 looks up [<driver>]verify_ca, and
                            # has no [fake-hardware] group, unless set here
                            # (over http it is never used)
                            'redfish_verify_ca': False}}


def seed_nodes(bm, redfish):
    """Enroll the nodes, all of them through each step together (a node at
    a time waits for each transition in turn), until available."""
    t0 = time.monotonic()
    ids = {}
    for name, (_, _, resource_class, kind) in NODES.items():
        node = bm.find_node(name) or bm.create_node(
            name=name, id=node_uuid(name), driver='fake-hardware',
            resource_class=resource_class, properties=NODE_PROPERTIES,
            **node_interfaces(name, kind, redfish))
        ids[name] = node.id

    def nodes():
        return {n.id: n for n in bm.nodes(fields=[
            'uuid', 'provision_state', 'power_state'])
            if n.id in ids.values()}

    def each(what, needs, change, done):
        """``change`` every node that ``needs`` it; until all are ``done``."""
        for node in nodes().values():
            if needs(node):
                change(node.id)
        wait_for('the nodes %s' % what, lambda: all(
            done(n) for n in nodes().values()), timeout=120, interval=0.25)

    each('manageable', lambda n: n.provision_state == 'enroll',
         lambda i: bm.set_node_provision_state(i, 'manage'),
         lambda n: n.provision_state != 'enroll' and not n.provision_state
         .endswith('ing'))
    # Fake power starts as None, which nova treats as unusable; and a
    # node left powered off would be stopped by nova's power sync.
    each('powered on', lambda n: n.power_state != 'power on',
         lambda i: bm.set_node_power_state(i, 'power on'),
         lambda n: n.power_state == 'power on')
    for name, node_id in ids.items():
        bm.set_node_traits(node_id, NODES[name][0])
    each('available', lambda n: n.provision_state == 'manageable',
         lambda i: bm.set_node_provision_state(i, 'provide'),
         lambda n: n.provision_state == 'available')
    for name, node_id in ids.items():
        if NODES[name][1]:
            bm.set_node_maintenance(node_id, reason='minicloud seed: '
                                    'in maintenance on purpose')
    log('ironic nodes %s' % ', '.join(sorted(ids)), t0)
    return ids


def wait_for_providers(placement, node_ids):
    """Until every node is a provider nova can (or, in maintenance, cannot)
    schedule to: nova reserves a node's whole inventory while it is unusable.
    """
    t0 = time.monotonic()

    def ready(name, node_id):
        rc = 'CUSTOM_' + NODES[name][2].upper().replace('-', '_')
        inv = placement.get('/resource_providers/%s/inventories' % node_id,
                            microversion='1.39')
        if inv.status_code != 200 or rc not in inv.json()['inventories']:
            return False
        traits = placement.get('/resource_providers/%s/traits' % node_id,
                               microversion='1.39').json()['traits']
        want_reserved = 1 if NODES[name][1] else 0
        return (inv.json()['inventories'][rc]['reserved'] == want_reserved
                and set(NODES[name][0]) <= set(traits))

    for name, node_id in node_ids.items():
        wait_for('%s in placement' % name,
                 lambda n=name, i=node_id: ready(n, i))
    log('nodes schedulable in placement', t0)


def seed_flavors_and_image(compute, image):
    t0 = time.monotonic()
    for name, (sizes, extra_specs) in FLAVORS.items():
        flavor = compute.find_flavor(name) or compute.create_flavor(
            name=name, **sizes)
        if extra_specs:
            compute.create_flavor_extra_specs(flavor, extra_specs)
    if not image.find_image(IMAGE):
        created = image.create_image(
            name=IMAGE, data=b'\0' * 65536, disk_format='raw',
            container_format='bare', visibility='public')
        wait_for('image active', lambda: image.get_image(
            created.id).status == 'active', timeout=30, interval=0.2)
    log('flavors %s, image %s' % (', '.join(FLAVORS), IMAGE), t0)


def seed_cloud(nova_manage):
    import subprocess

    admin = openstack.connect(cloud='minicloud-admin')
    system = openstack.connect(cloud='minicloud-system-admin')
    seed_flavors_and_image(admin.compute, admin.image)
    node_ids = seed_nodes(system.baremetal,
                          json.loads(os.environ['MINICLOUD_REDFISH']))
    wait_for_providers(admin.placement, node_ids)
    t0 = time.monotonic()
    want = set(node_ids.values())

    def hypervisors_seen():
        subprocess.run(nova_manage + ['cell_v2', 'discover_hosts'],
                       check=True, capture_output=True)
        seen = {h.name for h in admin.compute.hypervisors()}
        return want <= seen

    wait_for('nova hypervisors for every node', hypervisors_seen,
             interval=1)
    log('nova hypervisors for the nodes', t0)


def main(argv):
    try:
        if argv[:1] == ['keystone']:
            url, password, region = argv[1:4]
            seed_keystone(url, password, region,
                          dict(a.split('=', 1) for a in argv[4:]))
        elif argv[:1] == ['cloud']:
            seed_cloud(argv[1:])
        else:
            raise SystemExit(__doc__)
    except TimedOut as exc:
        raise SystemExit(str(exc)) from None


if __name__ == '__main__':
    main(sys.argv[1:])
