"""Live Vega-Lite charts (:class:`VegaView`) that take new data in place, and the Vega-Lite 5
bundles of :mod:`.vegalite` (re-exported here)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import anywidget
from traitlets import Dict, List, Unicode

from ..engine.locks import widget_lock
from ..engine.paths import cache_dir
from .vegalite import MIMETYPE, SCHEMA, bundle, enable_altair, spec_of  # noqa: F401 (re-exported)


# --------------------------------------------------------------------------- live charts

#: the name of a live chart's data source (its spec says ``{"name": DATA}``; values come apart)
DATA = "recs"
#: the Vega-Lite version the live charts are compiled with (the one of the static snapshots)
VL_VERSION = "5.20"
_JS = Path(__file__).parent / "js"
_library_code: str | None = None
_library_lock = widget_lock("vega-library")


def library_code() -> str:
    """The browser's Vega bundle (``js/vega_library.js`` with Vega, Vega-Lite and vega-embed,
    bundled by vl-convert: offline), made once per version and kept in the user's cache."""
    global _library_code
    with _library_lock:
        if _library_code is None:
            import vl_convert as vlc
            snippet = (_JS / "vega_library.js").read_text()
            key = hashlib.sha256(f"{vlc.__version__}|{VL_VERSION}|{snippet}".encode()).hexdigest()[:16]
            path = cache_dir() / f"vega-library-{key}.js"
            try:
                _library_code = path.read_text()
            except OSError:
                _library_code = vlc.javascript_bundle(snippet, vl_version=VL_VERSION)
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    tmp = path.with_suffix(f".{os.getpid()}.tmp")
                    tmp.write_text(_library_code)
                    tmp.replace(path)
                except OSError:    # a read-only cache: build it again next time
                    pass
        return _library_code


class VegaLibrary(anywidget.AnyWidget):
    """Carries the Vega bundle to the browser, once per kernel (never displayed)."""

    _esm = ""

    def __init__(self):
        super().__init__(_esm=library_code())


_library: VegaLibrary | None = None


def library() -> VegaLibrary:
    global _library
    with _library_lock:
        if _library is None or _library.comm is None:
            _library = None
    if _library is None:
        _library = VegaLibrary()
    return _library


class VegaView(anywidget.AnyWidget):
    """A Vega-Lite chart in the browser whose data change in place (``values``); a new ``spec``
    (whose data is the named source :data:`DATA`) draws it anew."""

    _esm = _JS / "vega_view.js"
    spec = Dict().tag(sync=True)
    values = List().tag(sync=True)
    data_name = Unicode(DATA).tag(sync=True)
    #: selections whose state (a zoom, a brush bound to scales) a new spec keeps
    kept = List(Unicode()).tag(sync=True)
    #: what the chart shows in one line (its text form)
    summary = Unicode("")

    def __init__(self, **kwargs):
        library()               # the browser must have Vega before the chart draws
        super().__init__(**kwargs)

    def show(self, spec: dict, values: list) -> None:
        """A new chart (and its data)."""
        with self.hold_sync():
            self.values = values
            self.spec = spec

    def __repr__(self) -> str:
        return self.summary or "<Vega-Lite chart>"
