// The injector's form, drawn in the browser. A click sends one message that carries the values on
// screen at that moment (the kernel never reads the fields later, when they may have changed);
// clicks made while the kernel is busy wait in order, each with its own values, and show as
// pending until the kernel's answer comes back. The kernel answers every message once, in order.

function h(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids) if (kid) e.append(kid);
  return e;
}

let viewCount = 0;

function render({ model, el }) {
  const tag = `v${++viewCount}-${Math.random().toString(36).slice(2, 8)}`;
  let clicks = 0;
  const pending = new Map();          // id -> what was clicked, in click order
  const inputs = {};                  // column -> <input>
  const nulls = {};                   // column -> checkbox
  el.classList.add("streamsql-inj");

  const title = h("div", { class: "streamsql-inj-title" });
  const grid = h("div", { class: "streamsql-inj-grid" });
  const rowtime = h("input", { class: "streamsql-inj-input", "data-field": "ROWTIME", type: "text",
                               spellcheck: "false", autocomplete: "off" });
  const insert = h("button", { class: "streamsql-insert jupyter-button mod-primary", type: "button",
                               title: "insert the row the fields describe (Enter in a field does it too)" },
                   "+ Insert row");
  const bound = h("input", { class: "streamsql-inj-input", "data-field": "BOUND", type: "text",
                             placeholder: "HH:MM[:SS]", spellcheck: "false", autocomplete: "off" });
  const strict = h("input", { type: "checkbox", class: "streamsql-strict" });
  const punct = h("button", { class: "streamsql-punctuate jupyter-button", type: "button",
                              title: "send the bound: every later row of this producer has rowtime >= it (> when strict)" },
                  "⚑ Punctuate");
  const producer = h("select", { class: "streamsql-producer", title: "the producer the events come from" });
  const newProducer = h("input", { class: "streamsql-inj-input streamsql-new-producer", type: "text",
                                   placeholder: "new producer", spellcheck: "false" });
  const attach = h("button", { class: "streamsql-attach jupyter-button", type: "button" }, "Attach");
  const detach = h("button", { class: "streamsql-detach jupyter-button", type: "button" }, "Detach");
  const message = h("div", { class: "streamsql-message" });
  const waiting = h("div", { class: "streamsql-pending" });

  // ------------------------------------------------------------------ the form, from the model
  function fieldRow(name, input, hint, nullable) {
    const label = h("label", { class: "streamsql-inj-label", text: name, title: `${name} ${hint}` });
    const cells = [label, input];
    if (nullable) {
      const box = h("input", { type: "checkbox", class: "streamsql-null" });
      box.addEventListener("change", () => {
        input.disabled = box.checked;
        const on = new Set(model.get("nulls_on"));
        box.checked ? on.add(name) : on.delete(name);
        model.set("nulls_on", [...on]);
        model.save_changes();
      });
      nulls[name] = box;
      cells.push(h("label", { class: "streamsql-null-label", title: `${name} is NULL` }, box, "NULL"));
    } else {
      cells.push(h("span"));
    }
    return cells;
  }

  function buildGrid() {
    grid.replaceChildren(...fieldRow("ROWTIME", rowtime, "TIMESTAMP", false));
    for (const k of Object.keys(inputs)) delete inputs[k];
    for (const k of Object.keys(nulls)) delete nulls[k];
    const texts = model.get("texts") || {};
    const on = new Set(model.get("nulls_on") || []);
    for (const col of model.get("columns")) {
      const input = h("input", { class: "streamsql-inj-input", "data-field": col.name, type: "text",
                                 placeholder: col.hint, title: `${col.name} ${col.hint}`,
                                 spellcheck: "false", autocomplete: "off" });
      input.value = texts[col.name] ?? "";
      inputs[col.name] = input;
      input.addEventListener("change", () => syncText(col.name, input.value));
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") clickInsert(); });
      grid.append(...fieldRow(col.name, input, col.hint, col.nullable));
      if (col.nullable && on.has(col.name)) { nulls[col.name].checked = true; input.disabled = true; }
    }
  }

  function syncText(name, value) {
    const texts = { ...(model.get("texts") || {}) };
    texts[name] = value;
    model.set("texts", texts);
    model.save_changes();
  }

  function showTitle() {
    const s = model.get("status") || {};
    title.replaceChildren(h("b", { text: model.get("stream") }),
      h("span", { class: "streamsql-inj-clock",
                  text: ` clock ${s.clock ?? "none"} · pending ${s.pending ?? 0} · late ${s.late ?? 0}` }));
  }

  function showProducers() {
    const opts = model.get("producers") || ["default"];
    const cur = model.get("producer_name") || "default";
    producer.replaceChildren(...opts.map((p) => h("option", { value: p, text: p })));
    producer.value = opts.includes(cur) ? cur : opts[0];
  }

  function showMessage() {
    const kind = model.get("message_kind");
    message.textContent = model.get("message_text") || "";
    message.className = "streamsql-message" + (kind === "error" || kind === "late" ? " streamsql-error" : "");
    const bad = new Set(model.get("bad_fields") || []);
    for (const input of [rowtime, bound, ...Object.values(inputs)]) {
      input.classList.toggle("streamsql-bad", bad.has(input.dataset.field));
    }
  }

  function showPending() {
    if (!pending.size) {
      waiting.textContent = "";
      waiting.classList.remove("streamsql-busy");
      return;
    }
    waiting.classList.add("streamsql-busy");
    const items = [...pending.values()];
    waiting.textContent = `${items.length} pending (the kernel is busy), applied in click order:\n` +
      (items.length > 1 ? `${items[0]} … ${items[items.length - 1]}` : items[0]);
  }

  // a value set by Python (a cell that fills the form) shows; our own values echoed back do not
  // overwrite what was typed since
  const seen = {};                    // the model's values this view last saw
  function applyChanged(name, input) {
    const now = model.get(name) ?? "";
    if (seen[name] !== now && input.value !== now && document.activeElement !== input) input.value = now;
    seen[name] = now;
  }

  // ------------------------------------------------------------------ clicks
  function send(op, content, what) {
    const id = `${tag}-${++clicks}`;
    pending.set(id, what);
    showPending();
    model.send({ op, id, producer: producer.value, ...content });
  }

  function clickInsert() {
    const values = {};
    const nullList = [];
    for (const [name, input] of Object.entries(inputs)) {
      if (nulls[name] && nulls[name].checked) nullList.push(name);
      else values[name] = input.value;
    }
    const shown = Object.entries(values).map(([k, v]) => `${k}=${v}`).concat(nullList.map((k) => `${k}=NULL`));
    send("insert", { rowtime: rowtime.value, values, nulls: nullList },
         `row ${rowtime.value.trim() || "(clock)"} ${shown.join(", ")}`);
  }

  insert.addEventListener("click", clickInsert);
  rowtime.addEventListener("keydown", (e) => { if (e.key === "Enter") clickInsert(); });
  rowtime.addEventListener("change", () => { model.set("rowtime_text", rowtime.value); model.save_changes(); });
  punct.addEventListener("click", () =>
    send("punctuate", { bound: bound.value, strict: strict.checked },
         `bound ${strict.checked ? ">" : ">="} ${bound.value}`));
  bound.addEventListener("keydown", (e) => { if (e.key === "Enter") punct.click(); });
  bound.addEventListener("change", () => { model.set("bound_text", bound.value); model.save_changes(); });
  strict.addEventListener("change", () => { model.set("strict_on", strict.checked); model.save_changes(); });
  producer.addEventListener("change", () => { model.set("producer_name", producer.value); model.save_changes(); });
  newProducer.addEventListener("change", () => { model.set("new_producer_text", newProducer.value); model.save_changes(); });
  attach.addEventListener("click", () => {
    const name = newProducer.value.trim() || producer.value;
    send("attach", { name }, `attach ${name}`);
  });
  detach.addEventListener("click", () => send("detach", {}, `detach ${producer.value}`));

  model.on("msg:custom", (msg) => {
    if (msg && msg.ack !== undefined && pending.delete(msg.ack)) {
      if (msg.op === "attach" && msg.ok) newProducer.value = "";
      showPending();
    }
  });

  // ------------------------------------------------------------------ the model's changes
  model.on("change:columns", buildGrid);
  model.on("change:status", showTitle);
  model.on("change:stream", showTitle);
  model.on("change:producers", showProducers);
  model.on("change:producer_name", showProducers);
  model.on("change:message_text", showMessage);
  model.on("change:message_kind", showMessage);
  model.on("change:bad_fields", showMessage);
  model.on("change:rowtime_placeholder", () => { rowtime.placeholder = model.get("rowtime_placeholder"); });
  model.on("change:rowtime_text", () => applyChanged("rowtime_text", rowtime));
  model.on("change:bound_text", () => applyChanged("bound_text", bound));
  model.on("change:new_producer_text", () => applyChanged("new_producer_text", newProducer));
  model.on("change:strict_on", () => { strict.checked = !!model.get("strict_on"); });
  model.on("change:texts", () => {
    const prev = seen.texts || {};
    const now = model.get("texts") || {};
    for (const [name, input] of Object.entries(inputs)) {
      const v = now[name] ?? "";
      if ((prev[name] ?? "") !== v && input.value !== v && document.activeElement !== input) input.value = v;
    }
    seen.texts = { ...now };
  });
  model.on("change:nulls_on", () => {
    const on = new Set(model.get("nulls_on") || []);
    for (const [name, box] of Object.entries(nulls)) { box.checked = on.has(name); inputs[name].disabled = box.checked; }
  });

  rowtime.value = seen.rowtime_text = model.get("rowtime_text") || "";
  rowtime.placeholder = model.get("rowtime_placeholder") || "";
  bound.value = seen.bound_text = model.get("bound_text") || "";
  seen.texts = { ...(model.get("texts") || {}) };
  strict.checked = !!model.get("strict_on");
  newProducer.value = seen.new_producer_text = model.get("new_producer_text") || "";
  buildGrid();
  showTitle();
  showProducers();
  showMessage();

  const producers = h("details", { class: "streamsql-inj-producers" },
    h("summary", { text: "producers" }), h("div", { class: "streamsql-inj-line" }, producer, newProducer, attach, detach));
  el.replaceChildren(
    title, grid,
    h("div", { class: "streamsql-inj-line" }, insert),
    h("div", { class: "streamsql-inj-line" }, h("label", { class: "streamsql-inj-label", text: "bound" }), bound,
      h("label", { class: "streamsql-strict-label", title: "a strict bound: every later row has rowtime > it" },
        strict, "strict"), punct),
    producers, message, waiting);
  return () => pending.clear();
}

export default { render };
