"""One ``_repr_mimebundle_`` for every view: bring the view up to date, take the widget's own
bundle, add what else the view shows (a chart's Vega-Lite) and its plain text (what terminals
and nbval see). A view says only what differs, in the three ``bundle_*`` hooks."""
from __future__ import annotations


class TextBundle:
    """Mixed in before the ipywidgets class (``class V(TextBundle, widgets.VBox)``)."""

    def bundle_settle(self) -> None:
        """Bring the view up to date before it is shown (let its queries catch up, refresh)."""

    def bundle_extra(self) -> dict:
        """Representations beside the widget's (e.g. ``vega.bundle(chart)``)."""
        return {}

    def bundle_text(self) -> str | None:
        """The ``text/plain`` form (None: keep what the bundle has)."""
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        self.bundle_settle()
        data = super()._repr_mimebundle_(**kwargs)
        data.update(self.bundle_extra())
        text = self.bundle_text()
        if text is not None:
            data["text/plain"] = text
        return data
