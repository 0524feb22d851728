"""The embedded models' use cases: list them, prepare one (fine-tune it now and cache it); their
options: ``options.models``."""

from __future__ import annotations


from .options.models import PrepareOptions


def run_prepare(chosen: PrepareOptions) -> str:
    """Fine-tune the embedded model now and cache it; one already prepared is kept (``notify``
    hears what it scored) unless ``force``. Returns its cache folder."""
    from ..models.devices import resolve_device
    from ..models.zoo import entry_status, prepare
    from ..models.zoo.cache import entry_dir, read_metadata
    from ..models.zoo.registry import describe_entry

    device = resolve_device(chosen.device)
    if entry_status(chosen.name, chosen.quick)[0] and not chosen.force:
        if chosen.notify:
            chosen.notify(describe_entry(chosen.name, read_metadata(entry_dir(chosen.name))))
        return str(entry_dir(chosen.name))
    return str(prepare(chosen.name, chosen.progress, chosen.notify, force=chosen.force, quick=chosen.quick, device=device))
