// The page's copy of Vega, Vega-Lite and vega-embed: vl-convert bundles this snippet with them
// (streamsql/widgets/vega.py), and every live chart (vega_view.js) takes them from here, so the
// bundle (about 900 kB) crosses to the browser once per kernel, not once per chart.
export default {
  initialize() {
    const g = globalThis;
    if (!g.__streamsqlVega) {
      g.__streamsqlVega = { vegaEmbed };
      for (const resolve of g.__streamsqlVegaWaiters || []) resolve(g.__streamsqlVega);
      g.__streamsqlVegaWaiters = [];
    }
  },
  render({ el }) { el.style.display = "none"; },
};
