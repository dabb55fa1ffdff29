"""An interactive data map as one self-contained HTML file (plotly.js inlined; no server, no network).

:func:`write_map_html` renders plain data as a WebGL scatter, one trace per region: hovering a
point shows its id, region, fields and texts; checkboxes show and hide regions; a box / lasso
selection's ids can be copied or downloaded as JSON (``{"example_ids": [...]}``). It knows nothing
of data maps (``DataMap.to_html`` decides axes and regions). Needs ``plotly`` for its JS bundle.

Example (with plotly installed):
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_map_html(os.path.join(d, "m.html"), title="t", ids=[0, 1], x=[0.1, 0.2], y=[-1.0, -0.2],
    ...                        x_label="variability", y_label="confidence = −mean loss (higher = easier)",
    ...                        region=["hard-to-learn", "easy-to-learn"], regions=["hard-to-learn", "easy-to-learn"])
    ...     "−mean loss" in open(p, encoding="utf-8").read()
    True
"""

from __future__ import annotations

import html
import json
import math
import os
from typing import Any, Mapping, Sequence

import numpy as np

from ..atomic import write_text_atomic

__all__ = ["write_map_html", "REGION_COLOURS"]

#: colours of the regions (the PNG plot's boundary lines use the same); other names get grey
REGION_COLOURS = {"ambiguous": "#7b3294", "hard-to-learn": "#d7191c", "easy-to-learn": "#2c7bb6", "other": "#9e9e9e"}


def _plotly_js() -> str:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "DataMap.to_html needs plotly (for its JavaScript bundle): pip install 'hf-synthsample[interactive]'"
        ) from err
    return get_plotlyjs()


def _round(a: Any, digits: int = 5) -> list:
    """JSON-safe rounded floats (NaN/inf -> null)."""
    return [v if math.isfinite(v) else None for v in np.round(np.asarray(a, dtype=np.float64), digits).tolist()]


def write_map_html(
    path: str | os.PathLike,
    *,
    title: str,
    ids: Sequence[int | str],
    x: Sequence[float],
    y: Sequence[float],
    x_label: str,
    y_label: str,
    region: Sequence[str],
    regions: Sequence[str],
    fields: Mapping[str, Sequence[float]] | None = None,
    never_learned: Sequence[bool] | None = None,
    texts: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Write the interactive map to ``path`` (atomically); returns the path. Per point: ``ids``,
    ``x``, ``y``, ``region`` (one of ``regions``, a trace each) and, shown on hover, ``fields``
    (``{name: values}``), ``never_learned`` (beside ``forgetting``) and ``texts`` (escaped)."""
    n = len(ids)
    regions = list(regions)
    if n == 0:
        raise ValueError("the data map is empty")
    columns = {"x": x, "y": y, "region": region, **{f"fields[{k!r}]": v for k, v in (fields or {}).items()},
               **{f"texts[{k!r}]": v for k, v in (texts or {}).items()}}
    if never_learned is not None:
        columns["never_learned"] = never_learned
    for name, values in columns.items():
        if len(values) != n:
            raise ValueError(f"{name} has {len(values)} values for {n} points")
    unknown = sorted(set(region) - set(regions))
    if unknown:
        raise ValueError(f"region names {unknown} that are not in regions {regions}")
    index = {r: i for i, r in enumerate(regions)}
    data = {
        "title": title,
        "xLabel": x_label,
        "yLabel": y_label,
        "ids": [i if isinstance(i, str) else int(i) for i in np.asarray(ids).tolist()],
        "x": _round(x),
        "y": _round(y),
        "region": [index[r] for r in region],
        "regions": regions,
        "colours": [REGION_COLOURS.get(r, REGION_COLOURS["other"]) for r in regions],
        "fields": {k: _round(v, 4) for k, v in (fields or {}).items()},
        "never_learned": None if never_learned is None else np.asarray(never_learned, dtype=int).tolist(),
        "texts": {k: list(v) for k, v in (texts or {}).items()},
    }
    # "</" cannot end the JSON script element early once escaped
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    page = _TEMPLATE.replace("__TITLE__", html.escape(title)).replace("__PLOTLY__", _plotly_js()) \
        .replace("__DATA__", payload)
    write_text_atomic(path, page)
    return os.fspath(path)


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { font-family: sans-serif; margin: 8px; }
#controls { margin: 4px 0; display: flex; gap: 16px; flex-wrap: wrap; align-items: center; }
#plot { width: 100%; height: 75vh; }
#ids { width: 100%; height: 4em; font-family: monospace; }
#hoverbox { position: fixed; z-index: 10; max-width: 40em; background: #fffff0; border: 1px solid #888;
            padding: 4px 6px; font-size: 12px; pointer-events: none; white-space: pre-wrap; }
</style></head>
<body>
<div id="controls"><span id="regions"></span>
<span><b id="count">0</b> selected (box / lasso on the map)
<button id="copy">Copy ids</button> <button id="download">Download ids (JSON)</button>
<button id="clear">Clear</button></span><span id="status">rendering...</span></div>
<div id="plot"></div>
<textarea id="ids" readonly placeholder="selected example ids"></textarea>
<div id="hoverbox" hidden></div>
<pre id="selftest" hidden></pre>
<script>__PLOTLY__</script>
<script id="data" type="application/json">__DATA__</script>
<script>
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("data").textContent);
  const esc = s => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const fmt = v => v === null ? "n/a" : (Number.isInteger(v) ? String(v) : v.toFixed(4));
  const names = Object.keys(D.fields), cols = Object.keys(D.texts);
  // the hover box is built for the hovered point only (not 50,000 strings up front)
  function hover(i) {
    let s = "<b>example " + D.ids[i] + "</b> (" + D.regions[D.region[i]] + ")";
    for (const f of names) {
      s += "<br>" + f + ": " + fmt(D.fields[f][i]);
      if (f === "forgetting" && D.never_learned && D.never_learned[i]) s += " (never learned)";
    }
    for (const c of cols) s += "<br><i>" + esc(c) + "</i>: " + esc(D.texts[c][i]);
    return s;
  }
  const box = document.getElementById("hoverbox");
  function showHover(ev) {
    const p = ev.points[0], i = members[p.curveNumber][p.pointIndex];
    box.innerHTML = hover(i);
    const e = ev.event || {};
    box.style.left = ((e.clientX || 40) + 12) + "px";
    box.style.top = ((e.clientY || 40) + 12) + "px";
    box.hidden = false;
  }
  const members = D.regions.map(() => []);
  D.region.forEach((r, i) => members[r].push(i));
  const traces = D.regions.map((name, r) => ({
    type: "scattergl", mode: "markers", name: name + " (" + members[r].length + ")",
    x: members[r].map(i => D.x[i]), y: members[r].map(i => D.y[i]),
    hoverinfo: "none",
    marker: {size: 4, color: D.colours[r], opacity: 0.7},
  }));
  const layout = {title: {text: D.title}, dragmode: "lasso", hovermode: "closest",
                  xaxis: {title: {text: D.xLabel}}, yaxis: {title: {text: D.yLabel}},
                  legend: {itemsizing: "constant"}, margin: {t: 40}};
  const gd = document.getElementById("plot");
  let selected = [];
  function show(ids) {
    selected = ids.slice().sort((a, b) => a - b);
    document.getElementById("count").textContent = selected.length;
    document.getElementById("ids").value = selected.join(", ");
  }
  function exportJSON() { return JSON.stringify({example_ids: selected}); }
  const shown = t => t.visible === undefined || t.visible === true;
  function setRegion(r, on) {
    document.getElementById("region-" + r).checked = on;
    return Plotly.restyle(gd, {visible: on ? true : "legendonly"}, [r]);
  }
  const boxes = document.getElementById("regions");
  D.regions.forEach((name, r) => {
    const label = document.createElement("label");
    label.innerHTML = '<input type="checkbox" checked id="region-' + r + '"> ' + esc(name) + " ";
    label.style.color = D.colours[r];
    boxes.appendChild(label);
    label.firstChild.addEventListener("change", e => setRegion(r, e.target.checked));
  });
  const t0 = performance.now();
  Plotly.newPlot(gd, traces, layout, {responsive: true, displaylogo: false}).then(() => {
    const ms = performance.now();
    document.getElementById("status").textContent = "";
    document.body.dataset.renderedMs = Math.round(ms);
    document.body.dataset.plotMs = Math.round(ms - t0);
    gd.on("plotly_hover", showHover);
    gd.on("plotly_unhover", () => { box.hidden = true; });
    gd.on("plotly_selected", ev => show(ev ? ev.points.map(p => D.ids[members[p.curveNumber][p.pointIndex]]) : []));
    gd.on("plotly_deselect", () => show([]));
    gd.on("plotly_legendclick", ev => { setTimeout(() => {
      D.regions.forEach((_, r) => document.getElementById("region-" + r).checked = shown(gd.data[r])); }, 0); });
    if (location.hash === "#selftest") selftest();
  });
  document.getElementById("copy").onclick = () => navigator.clipboard && navigator.clipboard.writeText(exportJSON());
  document.getElementById("clear").onclick = () => show([]);
  document.getElementById("download").onclick = () => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([exportJSON()], {type: "application/json"}));
    a.download = "selected_example_ids.json";
    a.click();
  };
  // driven by a headless browser in the tests: hover, region filter, selection export
  async function selftest() {
    const out = {renderedMs: Number(document.body.dataset.renderedMs), plotMs: Number(document.body.dataset.plotMs),
                 traces: gd.data.map(t => t.x.length)};
    // WebGL traces hover by position (Fx.hover with a point number is for SVG traces)
    const r = D.region[0];
    // (a target makes it emit plotly_hover as a mouse event would)
    Plotly.Fx.hover(gd, {xval: D.x[0], yval: D.y[0], target: gd}, "xy");
    await new Promise(ok => setTimeout(ok, 50));
    out.hover = box.hidden ? null : box.textContent;
    await setRegion(r, false);
    out.visibleAfterFilter = gd.data.map(shown);
    out.checkboxAfterFilter = document.getElementById("region-" + r).checked;
    out.filteredRegion = r;
    await setRegion(r, true);
    // a selection event as the lasso sends it: the first two points of every trace
    const pts = [];
    gd.data.forEach((t, c) => { for (let j = 0; j < Math.min(2, t.x.length); j++) pts.push({curveNumber: c, pointIndex: j}); });
    gd.emit("plotly_selected", {points: pts});
    out.exported = JSON.parse(exportJSON());
    out.textarea = document.getElementById("ids").value;
    const pre = document.getElementById("selftest");
    pre.textContent = JSON.stringify(out);
    pre.hidden = false;
  }
})();
</script></body></html>
"""
