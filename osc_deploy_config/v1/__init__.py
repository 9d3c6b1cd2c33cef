"""The commands of osc-deploy-config, one module per noun.

OSC imports a command's module to build its parser for every run that
names it, and all of them for ``openstack --help`` and ``complete``: these
modules import only what OSC has loaded already (cliff, osc-lib) and
``v1.cli``.  The SDK, the service wrappers and the domain modules are
imported inside ``take_action``, when a command runs
(``tests/unit/test_plugin.py`` keeps it so).
"""
