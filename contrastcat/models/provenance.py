"""Whether a model lent to contrastcat in memory computes what its weights say: the code that runs
inside it (hooks, methods put on a class or an instance, classes of the caller's own put into a
transformers model) is walked, and any that is not transformers', torch's, accelerate's or
contrastcat's is refused.

The trust boundary. It guards against a caller's code silently changing a model's outputs under a
fingerprint that names the weights only: a forward hook left from a notebook cell, a patched
``forward``, a subclass whose forward rescales, so that records would say "this model" of what
another computation made. It does not guard against a caller who means to deceive their own
process (code that hides itself from inspection, or that patches contrastcat itself): that caller
owns the process, and no check inside it can stand against them. What it cannot follow within
its bounds (:data:`_MOST_FOLLOWED` pieces, :data:`_DEEPEST` deep) it counts as the caller's.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import os
import re
import sys
import types

import torch

from ..errors import BadInput


# Code these packages hold is theirs (transformers records attentions and hidden states with
# forward hooks; contrastcat's own are removed after each pass; torch's pruning reparametrises
# weights the fingerprint then sees): it does not change what the model computes unseen. Told
# by where the code that runs is, not by the module name a function claims. Anything else that
# runs inside the model (a hook, a method put on a class or an instance, a class of its own put
# into a transformers model) is the caller's, and the fingerprint, which names the weights
# only, would not name what ran.
_OWN_PACKAGES = ("transformers", "torch", "contrastcat", "accelerate")
# What those packages' methods are wrapped with (deprecation warnings, the hub's argument checks):
# their code runs around the library's, but is not the caller's.
_HELPERS = ("typing_extensions", "huggingface_hub", "safetensors")
_FORWARD_HOOKS = {
    "_forward_pre_hooks": "forward pre-hook", "_forward_hooks": "forward hook",
    "_backward_pre_hooks": "backward pre-hook", "_backward_hooks": "backward hook",
}
# state_dict hooks change what the fingerprint reads (a hook can hand it the old weights while
# others run); load_state_dict hooks what a load puts in.
_HOOK_KINDS = {
    **_FORWARD_HOOKS,
    "_state_dict_hooks": "state_dict hook", "_state_dict_pre_hooks": "state_dict pre-hook",
    "_load_state_dict_pre_hooks": "load_state_dict pre-hook",
    "_load_state_dict_post_hooks": "load_state_dict post-hook",
}
# What every module holds from torch's Module.__init__ (its weights, children and hook tables):
# not code put on the instance.
_MODULE_SLOTS = frozenset(vars(torch.nn.Module()))
# Methods a class of the caller's own may define over a library class's: they build the module
# or describe it, and do not take part in what it computes.
_CONSTRUCTION = frozenset({"__init__", "__repr__", "extra_repr", "_init_weights", "__init_subclass__"})
_BUILTIN_CODE = (types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodWrapperType,
                 types.MethodDescriptorType, types.ClassMethodDescriptorType)
_MOST_FOLLOWED = 200_000  # pieces of code followed in one check; past it (or too deep), counted as the caller's
_DEEPEST = 200
_SCRIPTED = tuple(kind for kind in (getattr(torch.jit, name, None) for name in ("ScriptModule", "ScriptFunction"))
                  if isinstance(kind, type))


def _package_folders() -> tuple[str, ...]:
    return _places(_OWN_PACKAGES)


def _helper_places() -> tuple[str, ...]:
    return _places(_HELPERS)


@functools.lru_cache(maxsize=8)
def _places(packages: tuple[str, ...]) -> tuple[str, ...]:
    """Each package's folders (a module of one file: that file)."""
    places = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            places += [os.path.realpath(folder) + os.sep for folder in spec.submodule_search_locations]
        elif spec is not None and spec.origin and os.path.isfile(spec.origin):
            places.append(os.path.realpath(spec.origin))
    return tuple(places)


@functools.lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(path)


def _module_file(cls: type) -> str:
    file = getattr(sys.modules.get(getattr(cls, "__module__", None) or ""), "__file__", None)
    return _real(file) if file else ""


class _Code:
    """What code a callable runs, followed through everything that can be told: a partial's
    function and arguments, a wrapper's ``__wrapped__``, a function's closure and defaults, a
    bound method's object, a callable object's class and attributes, a module's forward (an
    ``nn.Module`` used as a hook is called through torch's ``__call__``, but runs its own
    forward). ``foreign`` gives the first piece whose code is not in the packages' folders (or
    cannot be told: a builtin of another package, torch.jit's compiled code), None when all is."""

    def __init__(self, own: tuple[str, ...]):
        self.own = own
        # Python's own library (contextlib's decorators wrap some of transformers' methods), not
        # the packages installed beside it.
        self.stdlib = _real(os.path.dirname(os.__file__)) + os.sep
        self.seen: set[int] = set()
        self.kept: list = []  # what was seen stays alive, so its id is not reused
        self.classes: dict[type, tuple[str, object] | None] = {}
        self.depth = 0

    def trusted(self, file: str) -> bool:
        if file.startswith("<frozen ") and file.endswith(">"):  # Python's own, frozen into it (abc, os)
            return file[len("<frozen "):-1].split(".")[0] in sys.stdlib_module_names
        file = _real(file)
        if self.own and file.startswith(self.own + _helper_places()):
            return True
        return file.startswith(self.stdlib) and file[len(self.stdlib):].split(os.sep)[0] not in (
            "site-packages", "dist-packages")

    def is_own_class(self, cls: type) -> bool:
        return bool(self.own) and _module_file(cls).startswith(self.own)

    def foreign(self, thing) -> object | None:
        return self._foreign_parts((thing,))

    def foreign_object(self, thing) -> object | None:
        """An object that is not called itself (accelerate's hook): its class's code and what it holds,
        objects it holds among it (the hooks of accelerate's SequentialHook)."""
        found = self._foreign_class(type(thing))
        held = list(getattr(thing, "__dict__", {}).values())
        while found is None and held:
            value = held.pop()
            if isinstance(value, (list, tuple, set, frozenset)):
                held += list(value)
            elif _followed(value):
                found = self._foreign_parts((value,))
            elif hasattr(value, "__dict__") and not isinstance(value, (torch.Tensor, type, types.ModuleType)) \
                    and id(value) not in self.seen and len(self.seen) < _MOST_FOLLOWED:
                self.seen.add(id(value))
                self.kept.append(value)
                found = self._foreign_class(type(value))
                held += list(vars(value).values())
        return found

    def class_foreign(self, cls: type) -> tuple[str, object] | None:
        """The first attribute of this one class (not its bases) whose code is not the packages'."""
        if cls not in self.classes:
            self.classes[cls] = None
            for attribute, value in list(vars(cls).items()):
                found = self._foreign_parts((value,)) if _code_like(value) else None
                if found is not None:
                    self.classes[cls] = (attribute, found)
                    break
        return self.classes[cls]

    def _foreign_class(self, cls: type) -> object | None:
        for base in cls.__mro__:
            if base is not object and base.__module__ != "builtins":
                found = self.class_foreign(base)
                if found is not None:
                    return found[1]
        return None

    def _foreign_parts(self, parts) -> object | None:
        for part in parts:
            if part is None or not _followed(part) or id(part) in self.seen:
                continue  # data, or checked already (or being checked further up: a cycle)
            self.seen.add(id(part))
            self.kept.append(part)
            if self.depth > _DEEPEST or len(self.seen) > _MOST_FOLLOWED:
                return part  # past what can be followed: counted as the caller's
            self.depth += 1
            try:
                found = self._foreign(part)
            finally:
                self.depth -= 1
            if found is not None:
                return found
        return None

    def _foreign(self, thing) -> object | None:
        if isinstance(thing, _SCRIPTED):
            source = _scripted_from(thing)
            # compiled: the code that runs is not where any file says, unless it is a library's
            # own function compiled where it is defined (transformers 5.17's DeBERTa has
            # ``@torch.jit.script`` on module functions; 5.24's has none): then it runs what that
            # function's file says.
            return thing if source is None else self._foreign_parts((source,))
        if isinstance(thing, type):
            return self._foreign_class(thing)
        if isinstance(thing, (functools.partial, functools.partialmethod)):
            return self._foreign_parts((thing.func, *thing.args, *thing.keywords.values()))
        if isinstance(thing, (staticmethod, classmethod)):
            return self._foreign_parts((thing.__func__,))
        if isinstance(thing, property):
            return self._foreign_parts((thing.fget, thing.fset, thing.fdel))
        if isinstance(thing, functools.cached_property):
            return self._foreign_parts((thing.func,))
        if isinstance(thing, types.MethodType):
            owner = thing.__self__
            return self._foreign_parts((thing.__func__, owner if callable(owner) else type(owner)))
        if isinstance(thing, types.FunctionType):
            if not self.trusted(thing.__code__.co_filename):
                return thing
            cells = []
            for cell in thing.__closure__ or ():
                try:
                    cells.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    continue
            return self._foreign_parts((getattr(thing, "__wrapped__", None), *cells, *(thing.__defaults__ or ()),
                                        *(thing.__kwdefaults__ or {}).values()))
        if isinstance(thing, _BUILTIN_CODE):
            # Code in C: told by the module that made it (torch's, or Python's own), then what it is bound to.
            owner = getattr(thing, "__self__", None)
            if isinstance(owner, types.ModuleType):
                module = owner.__name__
            elif isinstance(owner, type):
                module = owner.__module__
            else:
                home = getattr(thing, "__objclass__", None)
                module = home.__module__ if home is not None else getattr(thing, "__module__", None)
            if not _trusted_name(module or (type(owner).__module__ if owner is not None else "")):
                return thing
            if owner is None or isinstance(owner, (types.ModuleType, type)):
                return None
            return self._foreign_parts((owner if _followed(owner) else type(owner),))
        if isinstance(thing, (list, tuple, set, frozenset)):
            return self._foreign_parts(list(thing))
        if isinstance(thing, dict):
            return self._foreign_parts(list(thing.values()))
        # Any other callable object, an nn.Module among them: its class's code (forward, __call__)
        # and the callables it holds (a module's children, hooks and attributes).
        return self._foreign_class(type(thing)) or self._foreign_parts(
            (getattr(thing, "__wrapped__", None), *getattr(thing, "__dict__", {}).values()))


def _scripted_from(thing) -> types.FunctionType | None:
    """The Python function a ``torch.jit.script``-ed function was compiled from, when torch's own
    record of what it compiled says so, and None for anything else compiled (a module, a script
    made from other code or from a string). ``_torchdynamo_inline`` (set by torch.jit.script on
    its result) and the names are attributes anyone can set; torch's cache of compiled functions,
    keyed by the function object itself, is what ties the script to that function. (Source that
    Python's line cache was made to lie about is past what this check can tell.)"""
    function = getattr(thing, "_torchdynamo_inline", None)
    cached = getattr(getattr(torch.jit, "_script", None), "_try_get_jit_cached_function", None)
    if not isinstance(function, types.FunctionType) or not isinstance(thing, torch.jit.ScriptFunction) \
            or cached is None:
        return None
    compiled = cached(function)
    name = getattr(thing, "qualified_name", None)
    if compiled is None or getattr(compiled, "qualified_name", None) != name:
        return None
    # A module loaded again (importlib.reload) has its functions compiled again, under a mangled name.
    plain = re.sub(r"\.___torch_mangle_\d+(?=\.)", "", name)
    return function if plain == f"__torch__.{function.__module__}.{function.__qualname__}" else None


def _followed(value) -> bool:
    """Code, or something that holds code: what a check follows (data is left alone)."""
    if isinstance(value, (str, bytes, int, float, complex, bool, torch.Tensor, types.ModuleType)) or value is None:
        return False
    return callable(value) or isinstance(value, (list, tuple, set, frozenset, dict, staticmethod, classmethod,
                                                 property, functools.cached_property, functools.partialmethod))


def _trusted_name(module: str) -> bool:
    root = str(module or "").split(".")[0]
    return root in _OWN_PACKAGES or root in _HELPERS or root in sys.stdlib_module_names


def _code_like(value) -> bool:
    """What a class holds that runs (a method, a property, a callable put there), not its data."""
    code = (types.FunctionType, types.MethodType, staticmethod, classmethod, property, functools.cached_property,
            functools.partial, functools.partialmethod, *_BUILTIN_CODE)
    return isinstance(value, code) or (
        callable(value) and not isinstance(value, type) and type(value).__module__ != "typing")


def _shown(thing) -> str:
    """Where the code is: a function by its code (a wrapper copies the name of what it wraps, not
    its code), anything else by its class."""
    if isinstance(thing, torch.jit.ScriptFunction):  # its class calls itself torch.jit.ScriptFunction, twice
        return f"a torch.jit script, {getattr(thing, 'qualified_name', '?').removeprefix('__torch__.')}"
    function = thing
    while isinstance(function, functools.partial):
        function = function.func
    function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    if isinstance(function, types.FunctionType) and code is not None:
        return f"{getattr(code, 'co_qualname', code.co_name)} in {code.co_filename}:{code.co_firstlineno}"
    if not hasattr(function, "__qualname__"):
        function = type(function)
    source = getattr(function, "__module__", None) or ""
    return f"{source}.{getattr(function, '__qualname__', type(function).__name__)}".lstrip(".")


def check_no_hooks(model: torch.nn.Module, name: str, function: str = "") -> None:
    """A hook can change what a model computes (shift its logits, detach a layer) without
    changing its weights, which is all its fingerprint covers: records would name a model that
    did not run. So can a method replaced on a class or on one module, or a class of the
    caller's own put into a transformers model, and a state_dict hook can hand the fingerprint
    other weights than those that run. Refuse one in one line, naming where it is, rather than
    explain it."""
    lead = f"{function + ': ' if function else ''}model {name!r}"
    modules = list(model.named_modules())
    found = [(where, kind, hook) for where, module in modules for kind in _HOOK_KINDS
             for hook in getattr(module, kind, {}).values()]
    found += [("every module (a global hook)", kind, hook) for kind in _FORWARD_HOOKS
              for hook in getattr(torch.nn.modules.module, f"_global{kind}", {}).values()]
    code = _Code(_package_folders())
    for where, kind, hook in found:
        if code.foreign(hook) is None:
            continue
        what = ("what the fingerprint reads as its weights (it can hand over other weights than those that run)"
                if "state_dict" in kind else "what the model computes without changing its weights, which is all "
                "its fingerprint names")
        raise BadInput(
            f"{lead} has a {_HOOK_KINDS[kind]} ({_shown(hook)}) on {where or 'the model itself'}: a hook can change "
            f"{what}; remove it (handle.remove()) and load the model again"
        )
    for where, module in modules:
        _check_parametrized(module, where or "the model itself", lead, code)
        _check_instance(module, where or "the model itself", lead, code)
    _check_module_classes(model, modules, lead, code)
    _check_namespaces(modules, lead, code)


def _check_parametrized(module: torch.nn.Module, where: str, lead: str, code: _Code) -> None:
    """A parametrization (torch.nn.utils.parametrize) of the caller's own computes the weight a
    module uses from the stored one each time it runs: the fingerprint names the stored weight,
    not what ran. torch's own (weight_norm, spectral_norm, orthogonal) are functions of stored
    tensors alone, as the old hook-based weight_norm is, and load."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, torch.nn.ModuleDict):
        return
    for name, chain in parametrizations.items():
        own = [step for step in chain if code.foreign(step) is not None]
        if own:
            raise BadInput(
                f"{lead}: {where} has a parametrization of {name!r} ({_shown(own[0])}): the weight it uses is "
                "computed by your code from the stored one each time it runs, and the fingerprint names only the "
                f"stored one; bake it in (torch.nn.utils.parametrize.remove_parametrizations(module, {name!r}, "
                "leave_parametrized=True)) and load the model again"
            )


def _check_instance(module: torch.nn.Module, where: str, lead: str, code: _Code) -> None:
    """Code put on one module: a method replaced on the instance (``forward``, ``_call_impl``),
    a compiled call, torch.jit, or a function of the caller's held as an attribute."""
    again = "it computes something else than its weights, which is all its fingerprint names"
    if isinstance(module, _SCRIPTED):
        raise BadInput(f"{lead}: {where} is compiled with torch.jit, whose code is not told by any file: {again}; "
                       "put the module it was made from back and load the model again")
    state = vars(module)
    if state.get("_compiled_call_impl") is not None or (
            type(module).__name__ == "OptimizedModule" and "_orig_mod" in state["_modules"]):
        raise BadInput(f"{lead}: {where} is compiled (torch.compile, module.compile()): contrastcat's passes hook "
                       "into its layers, which a compiled graph skips; load the model again without compiling it")
    accelerate = _accelerate_hooked(module, state, code)
    library = code.is_own_class(type(module))  # holds the library's functions (a class of your own: yours)
    for key, value in state.items():
        if key in _MODULE_SLOTS or key == "_compiled_call_impl":
            continue
        if accelerate and key in ("forward", "_old_forward"):
            continue  # accelerate's device hooks move tensors only; checked to be accelerate's own
        shadowed = inspect.getattr_static(type(module), key, None)
        if isinstance(value, types.MethodType) and value.__self__ is module and value.__func__ is shadowed:
            continue  # the class's own, bound to this module (accelerate puts it back so when its hook goes)
        if key == "forward" and _mixed_precision_wrapper(value):
            raise BadInput(
                f"{lead} has accelerate's mixed-precision wrapper on the forward of {where} (left by "
                "Trainer(bf16=True/fp16=True) or Accelerator(mixed_precision=...)): it runs the model under autocast, "
                "which its fingerprint does not name; pass accelerator.unwrap_model(model, keep_fp32_wrapper=False) "
                "(or del model.forward) and load the model again"
            )
        if key in ("forward", "__call__", "_call_impl", "_wrapped_call_impl") or isinstance(
                shadowed, (types.FunctionType, staticmethod, classmethod, functools.partialmethod)):
            raise BadInput(
                f"{lead} has its {key} replaced on {where}: {again}; put the class's {key} back "
                f"(del module.{key}) and load the model again"
            )
        if library and _followed(value) and not isinstance(value, (type, torch.nn.Module)):
            found = code.foreign(value)
            if found is not None:
                raise BadInput(
                    f"{lead} holds {_shown(found)} as {key} on {where}: code of your own inside the model changes "
                    "what it computes without changing its weights, which is all its fingerprint names; put the "
                    "library's back and load the model again"
                )


def _mixed_precision_wrapper(forward) -> bool:
    """accelerate's autocast wrapper around a model's own forward (``ConvertOutputsToFp32``, put
    on the instance by ``Accelerator.prepare`` under mixed precision), told by its code's place."""
    function = getattr(forward, "__func__", forward)
    return _in_accelerate(function) and ("autocast" in function.__code__.co_name or type(
        getattr(function, "__wrapped__", None)).__name__ == "ConvertOutputsToFp32")


def _in_accelerate(function) -> bool:
    """Whether a function's code is in accelerate's folders (never where accelerate is not installed)."""
    code = getattr(function, "__code__", None)
    accelerate = _places(("accelerate",))
    return bool(accelerate) and code is not None and _real(code.co_filename).startswith(accelerate)


def _accelerate_hooked(module: torch.nn.Module, state: dict, code: _Code) -> bool:
    """The forward on the instance is accelerate's (``add_hook_to_module``): its own function
    around the module's, calling the class's forward of this very module, with a hook of its own
    code. Anything else in ``forward`` (a hook object of the caller's, another module's forward
    under a ``_hf_hook`` set by hand) is a forward replaced."""
    forward, old, hook = state.get("forward"), state.get("_old_forward"), state.get("_hf_hook")
    if hook is None or not isinstance(forward, functools.partial) or forward.keywords:
        return False
    return (_in_accelerate(forward.func)
            and len(forward.args) == 1 and forward.args[0] is module
            and isinstance(old, types.MethodType) and old.__self__ is module
            and old.__func__ is inspect.getattr_static(type(module), "forward", None)
            and code.foreign(forward) is None and code.foreign_object(hook) is None)


def _check_module_classes(model: torch.nn.Module, modules, lead: str, code: _Code) -> None:
    """The classes the model's modules are: a method replaced on a library class
    (``torch.nn.Linear.forward = f``) runs in every module of that class; a forward must be the
    one written with its class (a wrapper transformers puts around it aside). In a transformers
    model, a class of the caller's own (a module swapped in, or ``module.__class__`` set) may
    not replace a method of the library class it stands for."""
    library = any(code.is_own_class(cls) and "forward" in vars(cls) and cls is not torch.nn.Module
                  for cls in type(model).__mro__)
    done: set[type] = set()
    for where, module in modules:
        kind = type(module)
        if kind in done:
            continue
        done.add(kind)
        place = f"{where or 'the model itself'} ({kind.__name__})"
        mro = kind.__mro__
        for index, cls in reversed(list(enumerate(mro))):  # bases first: a patch is named where it was put
            if cls is object:
                continue
            if code.is_own_class(cls):
                found = code.class_foreign(cls)
                if found is None and "forward" in vars(cls) and not _written_with(vars(cls)["forward"], cls):
                    found = ("forward", vars(cls)["forward"])
                if found is not None:
                    raise BadInput(
                        f"{lead}: {cls.__module__}.{cls.__qualname__}.{found[0]} is not the class's own (it runs "
                        f"{_shown(found[1])}), on {place}: a method replaced on a class changes what the model "
                        "computes without changing its weights, which is all its fingerprint names; put the class's "
                        "own back (or restart Python) and load the model again"
                    )
            elif library:
                below = {attribute for base in mro[index + 1:] if code.is_own_class(base)
                         for attribute, value in vars(base).items() if _code_like(value)}
                replaced = sorted(attribute for attribute, value in vars(cls).items()
                                  if attribute in below and attribute not in _CONSTRUCTION and _code_like(value))
                if replaced:
                    raise BadInput(
                        f"{lead}: {place} is of a class of your own ({cls.__module__}.{cls.__qualname__}), which "
                        f"replaces {replaced[0]} of the library class it stands for inside a transformers model: it "
                        "computes something else than its weights, which is all its fingerprint names; put the "
                        "library's module back and load the model again"
                    )


def _written_with(forward, cls: type) -> bool:
    """The forward a class holds is the one written with it: in its file, under its name, past any
    wrappers (``functools.wraps``: transformers' ``can_return_tuple``, ``check_model_inputs``)."""
    inner = forward
    for _ in range(100):
        wrapped = getattr(inner, "__wrapped__", None)
        if wrapped is None:
            break
        inner = wrapped
    code = getattr(inner, "__code__", None)
    if code is None:
        return False
    names = {f"{cls.__qualname__}.forward"} | ({"_forward_unimplemented"} if cls is torch.nn.Module else set())
    return _real(code.co_filename) == _module_file(cls) and getattr(code, "co_qualname", inner.__qualname__) in names


def _check_namespaces(modules, lead: str, code: _Code) -> None:
    """The functions of the library modules the model's classes are written in (and
    torch.nn.functional, which torch's layers call): a forward calls them by name at each pass
    (``eager_attention_forward``, ``F.linear``), so one replaced there (``modeling_bert.
    eager_attention_forward = f``) changes what every such model computes. A name the module
    imports from another package is that package's, and not told apart."""
    names = {"torch.nn.functional"}
    for _, module in modules:
        names.update(cls.__module__ for cls in type(module).__mro__ if code.is_own_class(cls))
    for name in sorted(names):
        namespace = sys.modules.get(name)
        for attribute, value in list(vars(namespace).items()) if namespace is not None else ():
            if isinstance(value, type) or not _code_like(value):
                continue
            found = code.foreign(value)
            if found is not None and attribute not in _imported_from_elsewhere(getattr(namespace, "__file__", None)):
                raise BadInput(
                    f"{lead}: {name}.{attribute} is not the library's own (it runs {_shown(found)}): a function "
                    "replaced in a library module changes what the model computes without changing its weights, "
                    "which is all its fingerprint names; put the library's own back (or restart Python) and load "
                    "the model again"
                )


@functools.lru_cache(maxsize=64)
def _imported_from_elsewhere(file: str | None) -> frozenset[str]:
    """The names a module's source imports from packages other than the library's own (read only
    when one of its functions is not the library's code)."""
    try:
        with open(file, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (OSError, TypeError, ValueError, SyntaxError):
        return frozenset()
    found: set[str] = set()
    statements = list(tree.body)
    while statements:
        statement = statements.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(statement, ast.ImportFrom) and not statement.level:
            if (statement.module or "").split(".")[0] not in _OWN_PACKAGES:
                found.update(alias.asname or alias.name for alias in statement.names)
        elif isinstance(statement, ast.Import):
            found.update(alias.asname or alias.name.split(".")[0] for alias in statement.names
                         if alias.name.split(".")[0] not in _OWN_PACKAGES)
        statements += [child for child in ast.iter_child_nodes(statement) if isinstance(child, ast.stmt)]
    return frozenset(found)
