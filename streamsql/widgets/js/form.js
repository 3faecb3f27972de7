// A row of fields and buttons whose clicks carry the fields' values as they are on screen (the
// kernel never reads a field later, when it may have changed); clicks made while the kernel is
// busy wait in order and show as pending until the kernel answers each.

let forms = 0;

function render({ model, el }) {
  const tag = `f${++forms}-${Math.random().toString(36).slice(2, 8)}`;
  let clicks = 0;
  const pending = new Set();
  const inputs = {};
  const buttons = {};
  el.classList.add("streamsql-form");
  const stacked = !!model.get("stacked");     // a field a line (label, input), the buttons under them
  const row = document.createElement("div");
  row.className = stacked ? "streamsql-form-grid" : "streamsql-form-row";
  const after = document.createElement("div");
  after.className = "streamsql-form-row";
  const waiting = document.createElement("span");
  waiting.className = "streamsql-form-pending";

  const values = () => Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]));
  const showPending = () => {
    waiting.textContent = pending.size ? `${pending.size} pending (the kernel is busy)` : "";
  };
  function click(name) {
    const id = `${tag}-${++clicks}`;
    pending.add(id);
    showPending();
    model.send({ op: name, id, values: values() });
  }

  for (const f of model.get("fields")) {
    const label = document.createElement("label");
    label.className = "streamsql-form-label";
    label.textContent = f.label;
    const input = document.createElement("input");
    input.type = f.kind === "number" ? "number" : "text";
    input.className = `streamsql-form-input streamsql-form-${f.name}`;
    input.placeholder = f.placeholder || "";
    input.style.width = f.width || "10em";
    if (f.kind === "number") input.min = "0";
    input.value = (model.get("values") || {})[f.name] ?? "";
    input.addEventListener("change", () => {
      model.set("values", { ...(model.get("values") || {}), [f.name]: input.value });
      model.save_changes();
    });
    if (f.enter) input.addEventListener("keydown", (e) => { if (e.key === "Enter") click(f.enter); });
    inputs[f.name] = input;
    row.append(label, input);
  }
  for (const b of model.get("buttons")) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `jupyter-button streamsql-form-button streamsql-${b.name}` + (b.primary ? " mod-primary" : "");
    button.textContent = b.label;
    button.addEventListener("click", () => click(b.name));
    buttons[b.name] = button;
    (stacked ? after : row).append(button);
  }
  (stacked ? after : row).append(waiting);
  el.replaceChildren(...(stacked ? [row, after] : [row]));

  const showDisabled = () => {
    const off = new Set(model.get("disabled") || []);
    for (const [name, b] of Object.entries(buttons)) b.disabled = off.has(name);
  };
  const seen = { ...(model.get("values") || {}) };
  model.on("change:values", () => {            // a value set by Python shows (not our own echo)
    const now = model.get("values") || {};
    for (const [k, input] of Object.entries(inputs)) {
      const v = now[k] ?? "";
      if ((seen[k] ?? "") !== v && String(input.value) !== String(v) && document.activeElement !== input) input.value = v;
    }
    Object.assign(seen, now);
  });
  const showMarks = () => {
    const marks = model.get("marks") || {};
    for (const [k, input] of Object.entries(inputs)) {
      input.classList.toggle("streamsql-form-good", marks[k] === "good");
      input.classList.toggle("streamsql-form-bad", marks[k] === "bad");
    }
  };
  model.on("change:marks", showMarks);
  showMarks();
  model.on("change:disabled", showDisabled);
  model.on("msg:custom", (msg) => { if (msg && pending.delete(msg.ack)) showPending(); });
  showDisabled();
}

export default { render };
