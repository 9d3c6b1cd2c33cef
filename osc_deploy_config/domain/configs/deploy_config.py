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

"""Deploy configs: parsing, naming, capability traits, the template format.

A *config* is ``<type>=<value>`` (``hyperthreading=enabled``).  An ironic
deploy template realises it on every hardware kind, or one template per
kind (resource class), for hardware whose BIOS names its settings
differently; the template's name is the *template trait* that flavors
require and capable nodes carry.  The config, the *capability traits* a
node needs to take it, and the resource class it serves live in the
template's ``extra`` under the keys below, so that every client can read
them::

    deploy_config_type             "hyperthreading"
    deploy_config_value            "enabled"
    deploy_config_requires_traits  "HW_CPU_HYPERTHREADING"   (comma-separated)
    deploy_config_resource_class   "baremetal-silver"        (one kind only)

(ironic's JSON patch accepts only ``[A-Za-z0-9_-]`` in a path, so the keys
use nothing else: any client can set and unset them.)

A template without ``requires-traits`` takes the built-in default of its
type; an empty string requires nothing.  Plain functions over plain data.
"""

import dataclasses
import functools
import re

from osc_lib import exceptions

EXTRA_TYPE = 'deploy_config_type'
EXTRA_VALUE = 'deploy_config_value'
EXTRA_REQUIRES = 'deploy_config_requires_traits'
EXTRA_CLASS = 'deploy_config_resource_class'
TEMPLATE_PREFIX = 'CUSTOM_DEPLOY_CONFIG_'
MAX_TRAIT_LENGTH = 255
# What a node must have to take a config of a well-known type.
DEFAULT_CAPABILITY_TRAITS = {
    'hyperthreading': ('HW_CPU_HYPERTHREADING',),
}

# Matched against the whole text (fullmatch): "$" would also match before
# a trailing newline.
_WORD = re.compile(r'[a-z0-9][a-z0-9_.-]*')
_CUSTOM_TRAIT = re.compile(r'CUSTOM_[A-Z0-9_]+')
_RESOURCE_CLASS = re.compile(r'[A-Za-z0-9_.-]{1,80}')


@dataclasses.dataclass(frozen=True)
class Config:
    """One deploy config, ``<type>=<value>``."""

    type: str
    value: str

    def __str__(self):
        return '%s=%s' % (self.type, self.value)


def parse_config(text):
    """``'hyperthreading=enabled'`` -> ``Config``; CommandError if invalid."""
    config_type, sep, value = text.partition('=')
    if not sep:
        raise exceptions.CommandError(
            'Invalid deploy config %r: expected TYPE=VALUE' % text
        )
    for part, what in ((config_type, 'type'), (value, 'value')):
        if not part:
            raise exceptions.CommandError(
                'Invalid deploy config %r: empty %s' % (text, what)
            )
        if not _WORD.fullmatch(part):
            raise exceptions.CommandError(
                'Invalid deploy config %r: the %s must be lowercase '
                'letters, digits, "_", "." or "-", starting with a letter '
                'or digit' % (text, what)
            )
    config = Config(config_type, value)
    template_trait(config)  # refuses configs too long for a trait
    return config


def parse_config_type(text):
    """A config type on its own (``list --config-type``)."""
    return parse_config('%s=x' % text).type


def normalize(text):
    """Upper case, each character outside A-Z0-9_ one ``_``.  Unlike
    ``os_traits.normalize_name`` it does not collapse runs of them (``a--b``
    is ``A__B``): template names made this way exist in clouds."""
    return re.sub(r'[^A-Z0-9_]', '_', text.upper())


def template_trait(config, resource_class=None):
    """The name of the template created for a config (on the hardware of
    one resource class: ``..._FOR_<CLASS>``)."""
    name = '%s%s_%s' % (
        TEMPLATE_PREFIX,
        normalize(config.type),
        normalize(config.value),
    )
    if resource_class:
        name += '_FOR_' + normalize(resource_class)
    if len(name) > MAX_TRAIT_LENGTH:
        raise exceptions.CommandError(
            'Deploy config %s is too long: its template name %s... would '
            'exceed %d characters' % (config, name[:40], MAX_TRAIT_LENGTH)
        )
    return name


def validate_template_name(name):
    """A deploy template's name must be a trait, as ironic checks it: a
    standard one (os-traits) or a custom one."""
    if len(name) > MAX_TRAIT_LENGTH:
        raise exceptions.CommandError(
            'Invalid deploy template name %r...: longer than %d characters'
            % (name[:40], MAX_TRAIT_LENGTH)
        )
    if not _CUSTOM_TRAIT.fullmatch(name) and (
            name not in standard_traits()):
        raise exceptions.CommandError(
            'Invalid deploy template name %r: it must be a standard trait '
            '(os-traits %s) or a custom trait, CUSTOM_ followed by A-Z, 0-9 '
            'and _' % (name, _os_traits_version())
        )
    return name


def refuse_standard_name(name):
    """A config's template may not be named as a standard trait: its name
    is the trait sync tags capable nodes with, and a grant's runbook runs
    on every node carrying it, which for a standard trait an inspection
    may set on nodes never checked."""
    if name in standard_traits():
        raise exceptions.CommandError(
            'Deploy template %s cannot realise a deploy config: its name is '
            'a standard trait (os-traits), which nodes may carry without '
            'being capable; name it CUSTOM_..., or leave --config out' % name)
    return name


def refuse_alike_classes(resource_class, node_classes):
    """One line when nodes carry another spelling of ``resource_class``
    that placement names alike (``baremetal-gold``, ``baremetal_gold``):
    nova schedules them as one kind, so a template for one would reach
    the other's hardware."""
    wanted = placement_class(resource_class)
    alike = sorted({c for c in node_classes if c and c != resource_class
                    and placement_class(c) == wanted})
    if alike:
        raise exceptions.CommandError(
            'Resource class %s is %s in placement, as the nodes\' %s: nova '
            'schedules them as one kind, so a template for one reaches the '
            'other. Give the nodes one spelling (openstack baremetal node set '
            '--resource-class), then create the template.' % (
                resource_class, wanted, ', '.join(alike)))


@functools.cache
def standard_traits():
    """The standard traits os-traits knows."""
    import os_traits

    return frozenset(os_traits.get_traits())


def validate_traits(traits):
    """Capability traits must be standard (os-traits) or CUSTOM_ traits."""
    import os_traits

    custom = [t for t in traits if os_traits.is_custom(t)]
    for trait in custom:
        if (not _CUSTOM_TRAIT.fullmatch(trait)
                or len(trait) > MAX_TRAIT_LENGTH):
            raise exceptions.CommandError(
                'Invalid trait %r: CUSTOM_ traits use A-Z, 0-9 and _, '
                'up to %d characters' % (trait, MAX_TRAIT_LENGTH)
            )
    known = standard_traits()
    unknown = [t for t in traits if t not in custom and t not in known]
    if unknown:
        raise exceptions.CommandError(
            'Unknown trait %r: neither a standard trait (os-traits %s) '
            'nor a CUSTOM_ trait' % (unknown[0], _os_traits_version())
        )
    return sorted(set(traits))


def _os_traits_version():
    import importlib.metadata

    return importlib.metadata.version('os-traits')


def template_extra(config, capability_traits, resource_class=None):
    """The ``extra`` keys that annotate a template with its config (and
    the resource class it serves, if only one)."""
    extra = {
        EXTRA_TYPE: config.type,
        EXTRA_VALUE: config.value,
        EXTRA_REQUIRES: ','.join(sorted(capability_traits)),
    }
    if resource_class:
        extra[EXTRA_CLASS] = resource_class
    return extra


def resource_class_of(extra):
    """The resource class a template serves alone, as placement names it
    (``CUSTOM_BAREMETAL_SILVER``), or None: every kind."""
    found = (extra or {}).get(EXTRA_CLASS)
    return placement_class(found) if found else None


def placement_class(resource_class):
    """A resource class as nova names it in placement: ironic's
    ``baremetal-gold`` is ``CUSTOM_BAREMETAL_GOLD`` (os-resource-classes'
    ``normalize_name``)."""
    import os_resource_classes

    return os_resource_classes.normalize_name(str(resource_class))


def validate_resource_class(text):
    """A resource class as ironic takes it: letters, digits, ``_`` ``-``
    ``.``, up to 80 characters."""
    if not _RESOURCE_CLASS.fullmatch(text):
        raise exceptions.CommandError(
            'Invalid resource class %r: letters, digits, "_", "-" and ".", '
            'up to 80 characters, as ironic takes a node\'s' % text)
    return text


def config_of(extra):
    """The config a template's ``extra`` annotates, or None."""
    extra = extra or {}
    config_type, value = extra.get(EXTRA_TYPE), extra.get(EXTRA_VALUE)
    if not config_type or not value:
        return None
    return Config(str(config_type), str(value))


def stored_capability_traits(extra):
    """The capability traits a template's ``extra`` lists, or None when it
    does not say."""
    traits = (extra or {}).get(EXTRA_REQUIRES)
    if traits is None:
        return None
    if isinstance(traits, str):
        traits = traits.split(',')
    return sorted({str(t).strip() for t in traits if str(t).strip()})


def capability_traits_of(extra):
    """The traits a node needs for the template: those it lists, else the
    default of its config's type (a set lists its members')."""
    config = config_of(extra)
    stored = stored_capability_traits(extra)
    if config is None:
        return stored or []     # a set's: its members' (config_sets)
    if stored is None:
        return default_capability_traits(config.type)
    return stored


def default_capability_traits(config_type):
    return sorted(DEFAULT_CAPABILITY_TRAITS.get(config_type, ()))
