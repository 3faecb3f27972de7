// A Vega-Lite chart drawn once and then given new data in place (a Vega changeset), so that a
// live chart keeps its zoom, pan and brush while the query runs; a new spec redraws it, keeping
// the state of the selections named in ``kept`` (the timeline's zoom along rowtime). Vega
// itself comes from the page's one VegaLibrary widget (a bundle made by vl-convert: offline).
// A chart scrolled out of sight takes its new data when it comes back into sight (a hidden tab
// is skipped in the kernel): a lesson's many live charts would otherwise all redraw on every event,
// on the CPU that Spark needs.

function vegaLibrary() {
  const g = globalThis;
  if (g.__streamsqlVega) return Promise.resolve(g.__streamsqlVega);
  return new Promise((resolve) => (g.__streamsqlVegaWaiters ||= []).push(resolve));
}

async function render({ model, el }) {
  el.classList.add("streamsql-vega");
  const { vegaEmbed } = await vegaLibrary();
  let view = null;
  let finalize = null;
  let shown = 0;              // the spec drawn last (a newer one replaces an older one in flight)
  let draws = 0;              // whole drawings so far (data-draws: a new spec is a new drawing)
  const data = () => model.get("data_name");
  let inSight = true;         // until the observer first says otherwise
  let stale = false;          // new data arrived out of sight
  const observer = new IntersectionObserver((entries) => {
    inSight = entries[entries.length - 1].isIntersecting;
    if (inSight && stale) update();
  });
  observer.observe(el);

  function keptState() {      // the named selections' stores and top-level signals, if any is set
    const names = model.get("kept") || [];
    if (!view || !names.length) return null;
    try {
      const s = view.getState({
        recurse: false,
        data: (n) => names.some((k) => n === `${k}_store`),
        signals: (n) => names.some((k) => n === k || n.startsWith(`${k}_`)),
      });
      return Object.values(s.data || {}).some((d) => d && d.length) ? s : null;
    } catch (e) {
      return null;
    }
  }

  async function draw() {
    const mine = ++shown;
    const kept = keptState();
    const spec = structuredClone(model.get("spec"));
    if (!spec || !Object.keys(spec).length) return;
    spec.data = { name: data(), values: structuredClone(model.get("values") || []) };   // drawn with its data
    stale = false;
    const res = await vegaEmbed(el, spec, { actions: false, mode: "vega-lite" });
    if (mine !== shown) { res.finalize(); return; }
    if (finalize) finalize();
    view = res.view;
    finalize = res.finalize;
    if (kept) {
      try {
        view.setState(kept);
        await view.runAsync();
      } catch (e) {
        console.warn("streamsql: the chart's zoom could not be kept", e);
      }
    }
    el.dataset.points = String((model.get("values") || []).length);
    el.dataset.draws = String(++draws);
  }

  async function update() {
    if (!view) return;
    if (!inSight) { stale = true; return; }
    stale = false;
    const values = structuredClone(model.get("values") || []);
    view.change(data(), view.changeset().remove(() => true).insert(values));
    await view.runAsync();
    el.dataset.points = String(values.length);
  }

  model.on("change:spec", draw);
  model.on("change:values", update);
  await draw();
  return () => { observer.disconnect(); if (finalize) finalize(); };
}

export default { render };
