// The release report: renders window.REPORT_DATA (data.js) into the sections of index.html. No network, no
// dependencies, no build step. Every text from the data enters the page as a text node (never as HTML) except the
// datasheet, which the release renders to escaped HTML at build time.
(function () {
  "use strict";
  const D = window.REPORT_DATA;
  const PAGE_SIZE = 50;
  const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const F = {};
  D.lookups.item_fields.forEach(function (name, i) { F[name] = i; });

  // ---- small DOM helpers ----------------------------------------------------------------------------------------
  function el(tag, attrs) {
    const node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        const v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === "text") node.textContent = v;
        else if (k === "class") node.className = v;
        else node.setAttribute(k, v === true ? "" : String(v));
      });
    }
    for (let i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function svg(tag, attrs) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    for (let i = 2; i < arguments.length; i++) if (arguments[i]) node.appendChild(arguments[i]);
    return node;
  }
  function fmt(x, places) {
    if (x === null || x === undefined) return "—";
    return Number(x).toFixed(places === undefined ? 1 : places);
  }
  function plural(n, word, many) { return n + " " + (n === 1 ? word : (many || word + "s")); }
  function rows(t) { // {columns, rows} -> array of objects
    return t && t.rows ? t.rows.map(function (r) {
      const o = {}; t.columns.forEach(function (c, i) { o[c] = r[i]; }); return o;
    }) : [];
  }
  function has(t, column) { return !!t && t.columns.indexOf(column) >= 0; }
  function dataTable(caption, columns, body, cls) {
    return el("div", { class: "table-wrap" },
      el("table", { class: cls || null },
        caption ? el("caption", { text: caption }) : null,
        el("thead", null, el("tr", null, columns.map(function (c) { return el("th", { scope: "col", text: c }); }))),
        el("tbody", null, body)));
  }
  function note(text) { return el("p", { class: "note", text: text }); }
  function itemLink(id) { return el("a", { href: "#items/" + encodeURIComponent(id), class: "item-link", text: id }); }

  // ---- header -----------------------------------------------------------------------------------------------------
  const meta = D.meta;
  document.title = meta.benchmark + " " + meta.version + " — release report";
  document.getElementById("title").textContent = meta.benchmark + " " + meta.version;
  document.getElementById("subtitle").textContent =
    plural(meta.open_items, "open item") + (meta.sealed_items ? " (+ " + meta.sealed_items + " sealed, not shown)" : "") +
    " · " + plural(meta.disciplines.length, "discipline") + " · licence " + meta.licence;

  // ---- leaderboard --------------------------------------------------------------------------------------------------
  function ciScale(board) {
    let lo = 100, hi = 0;
    board.forEach(function (r) {
      if (r.ci_low !== null && r.ci_low !== undefined) lo = Math.min(lo, r.ci_low);
      if (r.ci_high !== null && r.ci_high !== undefined) hi = Math.max(hi, r.ci_high);
    });
    if (lo > hi) { lo = 0; hi = 100; }
    lo = Math.max(0, Math.floor(lo / 10) * 10);
    hi = Math.min(100, Math.ceil(hi / 10) * 10);
    if (hi - lo < 10) { hi = Math.min(100, lo + 10); lo = hi - 10; }
    return { lo: lo, hi: hi, x: function (v) { return 12 + (v - lo) / (hi - lo) * 176; } };
  }
  function ciAxis(scale) {
    const s = svg("svg", { viewBox: "0 0 200 16", class: "ci", role: "img", "aria-label": "scale " + scale.lo + " to " + scale.hi + " %" });
    for (let v = scale.lo; v <= scale.hi + 1e-9; v += (scale.hi - scale.lo) / 5) {
      const t = svg("text", { x: scale.x(v), y: 12, "text-anchor": "middle", class: "tick" });
      t.textContent = Math.round(v);
      s.appendChild(t);
    }
    return s;
  }
  function ciBar(scale, r) {
    const label = "accuracy " + fmt(r.accuracy) + "%, 95% CI " + fmt(r.ci_low) + " to " + fmt(r.ci_high);
    const s = svg("svg", { viewBox: "0 0 200 16", class: "ci", role: "img", "aria-label": label });
    const title = svg("title", {}); title.textContent = label; s.appendChild(title);
    s.appendChild(svg("line", { x1: 12, x2: 188, y1: 8, y2: 8, class: "axis" }));
    if (r.ci_low !== null && r.ci_high !== null) {
      s.appendChild(svg("line", { x1: scale.x(r.ci_low), x2: scale.x(r.ci_high), y1: 8, y2: 8, class: "interval" }));
    }
    if (r.accuracy !== null) s.appendChild(svg("circle", { cx: scale.x(r.accuracy), cy: 8, r: 3.5, class: "point" }));
    return s;
  }
  function renderLeaderboard() {
    const root = document.getElementById("leaderboard-body");
    const t = D.leaderboard;
    const board = rows(t);
    if (!board.length) { root.appendChild(note("No configuration was evaluated in this release.")); return; }
    const scale = ciScale(board);
    const extra = ["answered", "missing", "unparsed", "unparsed_answers"].filter(function (c) { return has(t, c); });
    const tier = has(t, "tier");
    const head = ["Rank", "Model"].concat(tier ? ["Tier"] : [], ["Accuracy %", "95% CI", "Items"],
      extra.map(function (c) { return c === "unparsed_answers" ? "Unparsed" : c[0].toUpperCase() + c.slice(1); }));
    const body = board.map(function (r) {
      return el("tr", null,
        el("td", { class: "num", text: r.rank === null ? "—" : r.rank }),
        el("th", { scope: "row", text: r.model }),
        tier ? el("td", { class: "num", text: r.tier === null ? "—" : r.tier }) : null,
        el("td", { class: "num", text: fmt(r.accuracy) }),
        el("td", { class: "ci-cell" }, el("span", { class: "ci-text", text: fmt(r.ci_low) + "–" + fmt(r.ci_high) }), ciBar(scale, r)),
        el("td", { class: "num", text: r.n_items }),
        extra.map(function (c) { return el("td", { class: "num", text: r[c] === null ? "—" : r[c] }); }));
    });
    const table = dataTable(null, head, body, "leaderboard");
    table.querySelector("thead th:nth-child(" + (tier ? 5 : 4) + ")").appendChild(ciAxis(scale));
    root.appendChild(note(plural(board.length, "configuration") + " evaluated on the open items. Bars: 95% bootstrap " +
      "confidence interval of the accuracy (dot: the accuracy), on a common scale from " + scale.lo + " to " + scale.hi + "%." +
      (tier ? " Tier: models whose gap to the tier's leader is not resolvable share a tier." : "") +
      (has(t, "answered") ? "" : " Answered/missing counts per model are not in this release's leaderboard table.")));
    root.appendChild(table);
  }

  // ---- heat map ---------------------------------------------------------------------------------------------------
  function luminance(r, g, b) { // WCAG relative luminance of an sRGB colour (0..255 channels)
    const c = [r, g, b].map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
  function heatColour(v) { // light (low) to dark blue (high); black or white text, whichever contrasts more (>= 4.5:1)
    const t = Math.max(0, Math.min(1, v / 100));
    const rgb = [235 - t * 228, 243 - t * 184, 252 - t * 122].map(Math.round); // #ebf3fc .. #073b82
    const lum = luminance(rgb[0], rgb[1], rgb[2]);
    const onWhite = 1.05 / (lum + 0.05), onBlack = (lum + 0.05) / 0.05;
    return { bg: "rgb(" + rgb.join(", ") + ")", fg: onWhite >= onBlack ? "#ffffff" : "#000000" };
  }
  function renderHeatmap() {
    const root = document.getElementById("heatmap-body");
    const h = D.heatmap;
    if (!h.models.length) { root.appendChild(note("No configuration was evaluated in this release.")); return; }
    let missing = 0;
    const body = h.models.map(function (m, i) {
      return el("tr", null, el("th", { scope: "row", text: m }), h.disciplines.map(function (d, j) {
        const c = h.cells[i][j];
        if (!c) {
          missing++;
          return el("td", { class: "heat-cell missing", "aria-label": m + ", " + d + ": no data", title: "no data", text: "—" });
        }
        const colour = heatColour(c[0]);
        const label = m + ", " + d + ": " + fmt(c[0]) + "% (95% CI " + fmt(c[1]) + "–" + fmt(c[2]) + ", " + c[3] + " items)";
        const td = el("td", { class: "heat-cell", title: label, "aria-label": label, text: fmt(c[0], 0) });
        td.style.background = colour.bg; td.style.color = colour.fg;
        return td;
      }));
    });
    const head = el("tr", null, el("th", { scope: "col", text: "Model" }),
      h.disciplines.map(function (d) { return el("th", { scope: "col", class: "rot" }, el("span", { text: d })); }));
    root.appendChild(note("Accuracy (%) of each configuration per discipline, rows in leaderboard order. " +
      (missing ? missing + " cells have no data (—): the model has no scored answer there." : "Every cell has data.") +
      " Hover or focus a cell for its confidence interval."));
    const legend = el("p", { class: "legend" }, "0%",
      [0, 20, 40, 60, 80, 100].map(function (v) {
        const s = el("span", { class: "swatch", title: v + "%" }); s.style.background = heatColour(v).bg; return s;
      }), "100%", el("span", { class: "swatch missing-swatch", title: "no data" }), "no data");
    root.appendChild(legend);
    root.appendChild(el("div", { class: "table-wrap" },
      el("table", { class: "heatmap" }, el("thead", null, head), el("tbody", null, body))));
  }

  // ---- stability ----------------------------------------------------------------------------------------------------
  function renderStability() {
    const root = document.getElementById("stability-body");
    const s = D.stability;
    if (!s.pairs) {
      root.appendChild(note("Fewer than two configurations were evaluated: there is no ranking whose stability " +
        "could be measured."));
      return;
    }
    const p = s.pairs;
    root.appendChild(el("p", null,
      "Of the " + plural(p.adjacent_pairs, "pair") + " of neighbours in the ranking, " + p.adjacent_resolvable +
      " are resolvable: the 95% paired-bootstrap interval of their accuracy gap excludes zero, so their order is " +
      "not an accident of which items were drawn. Over all " + p.pairs + " pairs, " + p.pairs_resolvable +
      " are resolvable."));
    root.appendChild(el("p", null,
      (p.largest_unresolvable_gap === null ? "Every gap is resolvable." :
        "The largest gap that is not resolvable is " + fmt(p.largest_unresolvable_gap) + " points: models closer " +
        "than that may be in either order. ") +
      (p.smallest_resolvable_gap === null ? " No gap is resolvable." :
        " The smallest resolvable gap is " + fmt(p.smallest_resolvable_gap) + " points.")));
    const rates = rows(s.rates);
    if (rates.length) {
      const last = rates[0];
      root.appendChild(el("p", null, "On a " + Math.round(last.rho * 100) + "% subsample of the items (" +
        last.subsample_items + " items, stratified by discipline), the top of the ranking keeps a Kendall tau of " +
        fmt(last.kendall_tau, 2) + " (sd " + fmt(last.kendall_tau_sd, 2) + ") with the full ranking, and the " +
        "leader stays first in " + fmt(last.rank1_retention * 100, 0) + "% of the subsamples."));
      root.appendChild(dataTable("Ranking on subsamples", ["Share of items", "Items", "Kendall tau (top)", "sd", "Leader stays first"],
        rates.map(function (r) {
          return el("tr", null, el("td", { class: "num", text: Math.round(r.rho * 100) + "%" }),
            el("td", { class: "num", text: r.subsample_items }), el("td", { class: "num", text: fmt(r.kendall_tau, 3) }),
            el("td", { class: "num", text: fmt(r.kendall_tau_sd, 3) }),
            el("td", { class: "num", text: fmt(r.rank1_retention * 100, 0) + "%" }));
        })));
    }
    const adjacent = rows(s.adjacent);
    if (adjacent.length) {
      root.appendChild(dataTable("Neighbours in the ranking", ["Better", "Worse", "Gap (points)", "95% CI", "Verdict"],
        adjacent.map(function (r) {
          return el("tr", null, el("td", { text: r.rank_better + ". " + r.better }),
            el("td", { text: r.rank_worse + ". " + r.worse }), el("td", { class: "num", text: fmt(r.gap) }),
            el("td", { class: "num", text: fmt(r.ci_low) + " to " + fmt(r.ci_high) }),
            el("td", { text: r.resolvable ? "resolvable" : "could be either order" }));
        })));
    }
  }

  // ---- selection ----------------------------------------------------------------------------------------------------
  function renderSelection() {
    const root = document.getElementById("selection-body");
    const sel = D.selection;
    if (!sel.length) { root.appendChild(note("No selection is recorded in this release.")); return; }
    const released = sel.reduce(function (a, r) { return a + r.released; }, 0);
    const ratios = sel.map(function (r) { return r.items && r.items.certified_ratio; }).filter(function (x) { return x !== null && x !== undefined; });
    root.appendChild(el("p", null, released + " items released over " + plural(sel.length, "discipline") + "." +
      (ratios.length ? " Every item selection carries a certificate F(S) / upper bound; the lowest is " +
        fmt(Math.min.apply(null, ratios), 3) + " (1 means provably optimal)." : "")));
    const body = sel.map(function (r) {
      const f = r.facts, it = r.items;
      const resp = it && it.response;
      let fidelity = "not measured";
      if (resp && resp.holdout_tau !== undefined) {
        fidelity = "tau " + fmt(resp.holdout_tau, 3) + " vs random " + fmt(resp.random_tau, 3) +
          (resp.holdout_acc_mae_points !== undefined ? "; accuracy error " + fmt(resp.holdout_acc_mae_points, 1) +
            " vs " + fmt(resp.random_acc_mae_points, 1) + " points" : "");
      } else if (resp && resp.holdout_validation) {
        fidelity = String(resp.holdout_validation);
      }
      const withAnswers = resp && resp.response_pool_items ? resp.response_pool_items : null;
      return el("tr", null,
        el("th", { scope: "row", text: r.discipline }),
        el("td", { text: r.anchors || "—" }),
        el("td", { class: "num", text: f ? f.k_total + (r.fact_pool ? " of " + r.fact_pool : "") : "—" }),
        el("td", { class: "num", text: f ? fmt(f.certified_ratio, 3) : "—" }),
        el("td", { class: "num", text: it ? it.k_total : "—" }),
        el("td", { class: "num", text: withAnswers === null ? "—" : withAnswers }),
        el("td", { class: "num", text: r.released }),
        el("td", { text: it ? it.method + (it.manual_review ? " (manual review: " + it.manual_review + ")" : "") : "—" }),
        el("td", { class: "num", text: it ? fmt(it.certified_ratio, 3) : "—" }),
        el("td", { text: fidelity }));
    });
    root.appendChild(dataTable("Per discipline", ["Discipline", "Anchors", "Facts selected", "Facts certified",
      "Items selected", "Pool items with answers", "Items released", "Item method", "Items certified", "Held-out fidelity"], body));
    root.appendChild(note("Facts selected: of the discipline's fact pool. Items selected: by the selection after the " +
      "audit (pool items with answers: candidates whose models' answers entered the objective). Certified: F(S) / " +
      "upper bound of the objective. Held-out fidelity: Kendall tau of the held-out models' ranking on the selection, " +
      "and its accuracy error, against stratified random subsets of the same size (only when models' answers entered " +
      "the selection)."));
  }

  // ---- audit --------------------------------------------------------------------------------------------------------
  function pagedTable(root, caption, columns, all, rowOf) {
    const wrap = el("div", null);
    root.appendChild(wrap);
    let page = 0;
    const pages = Math.max(1, Math.ceil(all.length / PAGE_SIZE));
    function draw() {
      wrap.textContent = "";
      wrap.appendChild(dataTable(caption + (pages > 1 ? " (page " + (page + 1) + " of " + pages + ")" : ""), columns,
        all.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE).map(rowOf)));
      if (pages > 1) {
        const prev = el("button", { type: "button", text: "Previous", disabled: page === 0 });
        const next = el("button", { type: "button", text: "Next", disabled: page >= pages - 1 });
        prev.addEventListener("click", function () { page--; draw(); });
        next.addEventListener("click", function () { page++; draw(); });
        wrap.appendChild(el("div", { class: "pager" }, prev, next));
      }
    }
    draw();
  }
  function renderAudit() {
    const root = document.getElementById("audit-body");
    const a = D.audit;
    root.appendChild(el("h3", { text: "Agents that ran" }));
    if (!a.ran.length) root.appendChild(note("No audit finding is in this release."));
    else root.appendChild(dataTable(null, ["Agent", "pass", "warn", "fail"], a.ran.map(function (r) {
      return el("tr", null, el("th", { scope: "row", text: r.agent }),
        ["pass", "warn", "fail"].map(function (s) { return el("td", { class: "num sev-" + s, text: r.counts[s] || 0 }); }));
    })));
    root.appendChild(el("h3", { text: "Agents skipped" }));
    if (!a.skipped.length) root.appendChild(note("Every agent ran in every discipline."));
    else root.appendChild(dataTable(null, ["Agent", "Reason", "Disciplines"], a.skipped.map(function (r) {
      return el("tr", null, el("th", { scope: "row", text: r.agent }), el("td", { text: r.reason }),
        el("td", { text: r.disciplines.length + ": " + r.disciplines.join(", ") }));
    })));
    root.appendChild(el("h3", { text: "Policy actions (dropped items and why)" }));
    const actions = rows(a.actions);
    if (!actions.length) root.appendChild(note("The audit policy dropped, relabelled or disclosed nothing."));
    else {
      const counts = {};
      actions.forEach(function (r) { counts[r.action] = (counts[r.action] || 0) + 1; });
      root.appendChild(note(Object.keys(counts).sort().map(function (k) { return plural(counts[k], "item") + " " + k; }).join(", ") +
        ". Dropped items are not released, so they are not in the item browser."));
      pagedTable(root, "Actions", ["Item", "Discipline", "Action", "Reason"], actions, function (r) {
        return el("tr", null, el("td", null, r.action === "drop" ? el("code", { text: r.item_id }) : itemLink(r.item_id)),
          el("td", { text: r.discipline }), el("td", { text: r.action }), el("td", { text: r.reason }));
      });
    }
    root.appendChild(el("h3", { text: "Suspect items (after evaluation)" }));
    const suspect = a.suspect;
    if (!suspect) root.appendChild(note("No suspect-item analysis is in this release."));
    else pagedTable(root, "Suspect items", suspect.columns, suspect.rows, function (r) {
      return el("tr", null, r.map(function (v, i) {
        if (suspect.columns[i] === "item_id") return el("td", null, itemLink(v));
        return el("td", { text: v === null ? "—" : typeof v === "object" ? JSON.stringify(v) : v });
      }));
    });
    root.appendChild(el("h3", { text: "Calibration against human gold labels" }));
    if (!a.calibration) root.appendChild(note("No agent was calibrated against human gold labels in this release: the " +
      "agents' verdicts are not validated against human judgement."));
    else root.appendChild(dataTable(null, a.calibration.columns, a.calibration.rows.map(function (r) {
      return el("tr", null, r.map(function (v) { return el("td", { text: v === null ? "—" : v }); }));
    })));
  }

  // ---- items --------------------------------------------------------------------------------------------------------
  const L = D.lookups;
  const items = D.items;
  const sourceById = {};
  rows(D.sources).forEach(function (s) { sourceById[s.source_id] = s; });
  let haystack = null; // lower-cased searchable text per item, built on the first search
  const state = { discipline: "", strategy: "", difficulty: "", status: "", q: "", page: 0 };
  let filtered = items;

  function options(select, label, values) {
    select.appendChild(el("option", { value: "", text: "all " + label }));
    values.forEach(function (v, i) { select.appendChild(el("option", { value: String(i), text: v })); });
  }
  function applyFilters() {
    const q = state.q.trim().toLowerCase();
    if (q && !haystack) {
      haystack = items.map(function (it) {
        return (it[F.id] + " " + it[F.question] + " " + it[F.options].map(function (o) { return o[0]; }).join(" ") +
          " " + it[F.explanation]).toLowerCase();
      });
    }
    const words = q ? q.split(/\s+/) : [];
    const d = state.discipline === "" ? -2 : Number(state.discipline);
    const s = state.strategy === "" ? -2 : Number(state.strategy);
    const l = state.difficulty === "" ? -2 : Number(state.difficulty);
    filtered = items.filter(function (it, i) {
      if (d !== -2 && it[F.discipline] !== d) return false;
      if (s !== -2 && it[F.strategy] !== s) return false;
      if (l !== -2 && it[F.difficulty] !== l) return false;
      if (state.status && it[F.status].indexOf(state.status) < 0) return false;
      for (let w = 0; w < words.length; w++) if (haystack[i].indexOf(words[w]) < 0) return false;
      return true;
    });
  }
  function badge(text, cls) { return el("span", { class: "badge " + (cls || ""), text: text }); }
  function factEntry(index, role) {
    const f = D.facts[index];
    const source = sourceById[L.sources[f[2]]];
    return el("li", { class: "fact", id: null },
      el("span", { class: "fact-text", text: f[1] }), " ",
      role ? badge(role, "role") : null,
      el("span", { class: "fact-meta" },
        f[5] >= 0 ? el("a", { class: "fact-source", href: L.documents[f[5]], rel: "noopener", "data-fact": f[0] },
          "source record: " + (source ? source.title : L.sources[f[2]])) : el("span", { text: L.sources[f[2]] }),
        " · licence " + (f[3] || "unknown") + (f[4] !== null ? " · tier " + f[4] : "") + " · fact " + f[0]));
  }
  function answerOf(v, it) {
    if (v === null) return { text: "not evaluated", cls: "na" };
    const samples = Array.isArray(v) ? v : [v];
    const right = samples.filter(function (p) { return p === it[F.answer]; }).length;
    const text = samples.map(function (p) { return p < 0 ? "unparsed" : LETTERS[p] || String(p); }).join(" ");
    if (samples.length === 1) return { text: text + (right ? " ✓ correct" : " ✗ wrong"), cls: right ? "ok" : "bad" };
    return { text: text + " (" + right + " of " + samples.length + " correct)", cls: right * 2 >= samples.length ? "ok" : "bad" };
  }
  function itemBody(it) {
    const body = el("div", { class: "item-body" });
    body.appendChild(el("p", { class: "stem", text: it[F.question] }));
    body.appendChild(el("ol", { class: "options", type: "A" }, it[F.options].map(function (o, i) {
      const key = i === it[F.answer];
      return el("li", { class: key ? "key" : null },
        el("span", { text: o[0] }), key ? badge("key", "key-badge") : null,
        o[1].length ? el("details", { class: "proofs" }, el("summary", { text: "proved by " + plural(o[1].length, "fact") }),
          el("ul", null, o[1].map(function (fi) { return factEntry(fi, null); }))) : null);
    })));
    if (it[F.explanation]) body.appendChild(el("p", null, el("strong", { text: "Explanation. " }), it[F.explanation]));
    if (it[F.facts].length) {
      body.appendChild(el("h4", { text: "Generated from" }));
      body.appendChild(el("ul", { class: "facts" }, it[F.facts].map(function (f) { return factEntry(f[0], f[1]); })));
    }
    const p = it[F.provenance];
    if (p) {
      body.appendChild(el("h4", { text: "Origin (item bank)" }));
      body.appendChild(el("p", { class: "provenance", text: p[0] + " · " + p[1] + " row " + p[2] +
        (p[3] !== null ? " · upstream id " + p[3] : "") + (p[4] ? " · source " + p[4] : "") + " · licence " + p[5] +
        (p[6] ? " · " + p[6] : "") }));
    }
    body.appendChild(el("h4", { text: "Audit findings" }));
    if (!it[F.findings].length) body.appendChild(note("No finding recorded."));
    else body.appendChild(el("ul", { class: "findings" }, it[F.findings].map(function (f) {
      const sev = L.severities[f[1]];
      return el("li", null, badge(sev, "sev-" + sev), " " + L.agents[f[0]], f[2] ? el("code", { class: "payload", text: f[2] }) : null);
    })));
    const evaluated = it[F.answers].some(function (v) { return v !== null; });
    const correct = it[F.answers].filter(function (v) { return v !== null && answerOf(v, it).cls === "ok"; }).length;
    const answeredBy = it[F.answers].filter(function (v) { return v !== null; }).length;
    body.appendChild(el("h4", { text: "How the evaluated models answered" +
      (answeredBy ? " (" + correct + " of " + answeredBy + " right)" : "") }));
    if (!evaluated) body.appendChild(note("No evaluated model answered this item."));
    else body.appendChild(dataTable(null, ["Model", "Answer"], it[F.answers].map(function (v, m) {
      const a = answerOf(v, it);
      return el("tr", null, el("th", { scope: "row", text: L.models[m] }), el("td", { class: "ans-" + a.cls, text: a.text }));
    }), "answers"));
    return body;
  }
  function itemEntry(it, open) {
    const status = it[F.status];
    const details = el("details", { class: "item", "data-item": it[F.id] },
      el("summary", null,
        el("code", { class: "item-id", text: it[F.id] }), " ",
        badge(L.disciplines[it[F.discipline]] || "?", "disc"),
        it[F.difficulty] >= 0 ? badge(L.difficulties[it[F.difficulty]], "diff") : null,
        it[F.strategy] >= 0 ? badge(L.strategies[it[F.strategy]], "strat") : null,
        status.map(function (s) { return badge(s, "status-" + s); }),
        el("span", { class: "item-stem", text: it[F.question] })));
    let rendered = false;
    function fill() { if (!rendered) { rendered = true; details.appendChild(itemBody(it)); } }
    details.addEventListener("toggle", function () { if (details.open) fill(); });
    if (open) { fill(); details.open = true; }
    return el("li", null, details);
  }
  function drawItems(openId) {
    const list = document.getElementById("items-list");
    const pages = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    list.textContent = "";
    list.setAttribute("start", String(state.page * PAGE_SIZE + 1));
    const frag = document.createDocumentFragment();
    filtered.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE).forEach(function (it) {
      frag.appendChild(itemEntry(it, it[F.id] === openId));
    });
    list.appendChild(frag);
    document.getElementById("items-count").textContent = filtered.length === items.length
      ? plural(items.length, "item") : filtered.length + " of " + plural(items.length, "item") + " match";
    document.querySelectorAll("#page-items .pager").forEach(function (pager) {
      pager.querySelector(".page-of").textContent = "page " + (state.page + 1) + " of " + pages;
      pager.querySelector(".prev").disabled = state.page === 0;
      pager.querySelector(".next").disabled = state.page >= pages - 1;
    });
  }
  function setupItems() {
    options(document.getElementById("f-discipline"), "disciplines", L.disciplines);
    options(document.getElementById("f-strategy"), "strategies", L.strategies);
    options(document.getElementById("f-difficulty"), "difficulties", L.difficulties);
    const status = document.getElementById("f-status");
    status.appendChild(el("option", { value: "", text: "any status" }));
    L.status_tags.forEach(function (s) { status.appendChild(el("option", { value: s, text: s })); });
    ["discipline", "strategy", "difficulty", "status"].forEach(function (k) {
      document.getElementById("f-" + k).addEventListener("change", function (e) {
        state[k] = e.target.value; state.page = 0; applyFilters(); drawItems();
      });
    });
    let timer = null;
    document.getElementById("f-search").addEventListener("input", function (e) {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = e.target.value; state.page = 0; applyFilters(); drawItems(); }, 150);
    });
    document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); });
    document.querySelectorAll("#page-items .pager").forEach(function (pager) {
      pager.querySelector(".prev").addEventListener("click", function () { state.page--; drawItems(); });
      pager.querySelector(".next").addEventListener("click", function () { state.page++; drawItems(); });
    });
    drawItems();
  }
  function showItem(id) { // a link to one item: clear the filters, go to its page, open it
    const index = items.findIndex(function (it) { return it[F.id] === id; });
    Object.assign(state, { discipline: "", strategy: "", difficulty: "", status: "", q: "" });
    ["discipline", "strategy", "difficulty", "status", "search"].forEach(function (k) { document.getElementById("f-" + k).value = ""; });
    applyFilters();
    state.page = index < 0 ? 0 : Math.floor(index / PAGE_SIZE);
    drawItems(id);
    const node = document.querySelector('details.item[open]');
    if (node) node.scrollIntoView();
    else document.getElementById("items-count").textContent = "Item " + id + " is not among the open items of this release.";
  }

  // ---- datasheet and navigation ---------------------------------------------------------------------------------------
  document.getElementById("datasheet-body").innerHTML = D.datasheet_html; // escaped at build time (report/markdown.py)
  const rendered = {};
  const renderers = { leaderboard: renderLeaderboard, heatmap: renderHeatmap, stability: renderStability,
    selection: renderSelection, audit: renderAudit, items: setupItems, datasheet: function () {} };
  function route(focus) {
    const hash = decodeURIComponent(location.hash.replace(/^#/, ""));
    const parts = hash.split("/");
    const page = renderers[parts[0]] ? parts[0] : "leaderboard";
    if (!rendered[page]) { rendered[page] = true; renderers[page](); }
    document.querySelectorAll(".page").forEach(function (s) { s.hidden = s.id !== "page-" + page; });
    document.querySelectorAll("#tabs a").forEach(function (a) {
      if (a.getAttribute("data-page") === page) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    });
    if (page === "items" && parts.length > 1) showItem(parts.slice(1).join("/"));
    if (focus) document.getElementById("h-" + page).setAttribute("tabindex", "-1");
    if (focus) document.getElementById("h-" + page).focus();
  }
  window.addEventListener("hashchange", function () { route(true); });
  route(false);
  window.reportReadyMs = performance.now(); // when the first page is drawn (tests read it; nothing else does)
})();
