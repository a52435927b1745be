// Small DOM helpers every view shares.

export const $ = (id) => document.getElementById(id);

/** An element with attributes (`class`, `data-*`, `aria-*`, ...) and children. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** Tells screen-reader users what changed. */
export function announce(text) {
  $("status").textContent = text;
}

/** Shows a failure (or clears it with null). */
export function problem(error) {
  const box = $("problem");
  box.textContent = error ? String(error.message ?? error) : "";
  box.hidden = !error;
}
