// Draws each table's active timeline as an SVG, from the view's JSON endpoint (no libraries:
// the API server may have no internet access). One mark per instant: x is the instant time,
// the row and colour are its action (compactions, completed ones too, have a row of their
// own), the fill its state.
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  // Relative to this script, so the page works under any URL prefix.
  const API_URL = new URL("../api/tables", document.currentScript.src);
  const ACTION_ORDER = [
    "commit", "deltacommit", "compaction", "logcompaction", "replacecommit",
    "clean", "rollback", "savepoint", "restore",
  ];
  const WIDTH = 960;
  const ROW = 30;
  const LEFT = 120;
  const RIGHT = 24;
  const TOP = 12;
  const BOTTOM = 34;

  // The instant time in UTC (the summary's time_utc) as milliseconds; an instant time that is
  // no date (a bootstrap's 00000000000001, 00000000000002) goes where it happened, when its
  // first state was reached; else read as yyyyMMddHHmmss[SSS], since only distances matter.
  function instantMillis(instant) {
    if (instant.time_utc) return Date.parse(instant.time_utc);
    const happened = instant.requested_at || instant.inflight_at || instant.completed_at;
    if (happened) return Date.parse(happened);
    const ts = instant.timestamp;
    const part = (from, to) => Number(ts.slice(from, to)) || 0;
    return Date.UTC(part(0, 4), part(4, 6) - 1, part(6, 8), part(8, 10), part(10, 12),
      part(12, 14), part(14, 17));
  }

  function timeText(instant) {
    if (instant.label) return instant.label;
    if (!instant.time_utc) return instant.timestamp;
    return instant.time_utc.replace("T", " ").replace("Z", " UTC");
  }

  function svgElement(name, attributes, parent) {
    const element = document.createElementNS(SVG_NS, name);
    for (const [key, value] of Object.entries(attributes)) {
      element.setAttribute(key, String(value));
    }
    if (parent) parent.appendChild(element);
    return element;
  }

  // The row of an instant: a completed compaction is a commit on the timeline, shown with the
  // compactions still planned or running.
  function rowOf(instant) {
    return instant.compaction ? "compaction" : instant.action;
  }

  function durationText(seconds) {
    if (seconds === null || seconds === undefined) return "-";
    return seconds < 60 ? `${seconds.toFixed(2)} s` : `${Math.round(seconds / 60)} min`;
  }

  function actionsOf(instants) {
    const present = new Set(instants.map(rowOf));
    const known = ACTION_ORDER.filter((a) => present.has(a));
    const others = [...present].filter((a) => !ACTION_ORDER.includes(a)).sort();
    return known.concat(others);
  }

  function drawTimeline(table) {
    const instants = table.instants;
    const actions = actionsOf(instants);
    const height = TOP + Math.max(actions.length, 1) * ROW + BOTTOM;
    const svg = svgElement("svg", {
      id: `timeline-${table.name}`,
      class: "timeline",
      viewBox: `0 0 ${WIDTH} ${height}`,
      role: "img",
      "aria-label": `Timeline of ${table.name}: ${instants.length} active instants`,
      "data-instants": instants.length,
    });
    if (instants.length === 0) {
      svgElement("text", { x: LEFT, y: TOP + ROW / 2, class: "axis" }, svg).textContent =
        "no instants on the active timeline";
      return svg;
    }
    const times = instants.map(instantMillis);
    const first = Math.min(...times);
    const span = Math.max(...times) - first;
    const plotWidth = WIDTH - LEFT - RIGHT;
    const x = (t) => LEFT + (span > 0 ? ((t - first) / span) * plotWidth : plotWidth / 2);
    const y = (action) => TOP + (actions.indexOf(action) + 0.5) * ROW;

    for (const action of actions) {
      svgElement("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: y(action), y2: y(action),
        class: "row" }, svg);
      svgElement("text", { x: LEFT - 10, y: y(action) + 4, class: "label",
        "text-anchor": "end" }, svg).textContent = action;
    }
    const axisY = height - BOTTOM + 22;
    const oldest = instants[0];
    const newest = instants[instants.length - 1];
    svgElement("text", { x: LEFT, y: axisY, class: "axis" }, svg).textContent = timeText(oldest);
    svgElement("text", { x: WIDTH - RIGHT, y: axisY, class: "axis", "text-anchor": "end" }, svg)
      .textContent = timeText(newest);

    instants.forEach((instant, index) => {
      const state = instant.state.toLowerCase();
      const mark = svgElement("circle", {
        cx: x(times[index]).toFixed(1),
        cy: y(rowOf(instant)),
        r: 7,
        class: `instant-mark action-${rowOf(instant)} state-${state}`,
        "data-timestamp": instant.timestamp,
        "data-action": instant.action,
        "data-state": instant.state,
        "data-row": rowOf(instant),
      }, svg);
      const kind = instant.compaction && instant.action !== "compaction" ?
        `compaction (${instant.action})` : instant.action;
      svgElement("title", {}, mark).textContent =
        `${instant.timestamp} (${timeText(instant)}) ${kind} ${state}; ` +
        `queued ${durationText(instant.queued_s)}, ran ${durationText(instant.ran_s)}`;
    });
    return svg;
  }

  function showProblem(container, message) {
    container.textContent = message;
    container.classList.add("problem");
  }

  async function drawAll() {
    const containers = document.querySelectorAll("[data-timeline]");
    if (containers.length === 0) return;
    let tables;
    try {
      const response = await fetch(API_URL, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      if (!response.ok) throw new Error(`${API_URL} answered HTTP ${response.status}`);
      tables = new Map((await response.json()).tables.map((t) => [t.name, t]));
    } catch (error) {
      containers.forEach((c) => showProblem(c, `Cannot draw the timeline: ${error.message}`));
      return;
    }
    for (const container of containers) {
      const table = tables.get(container.dataset.timeline);
      if (table && table.status === "ok") {
        container.replaceChildren(drawTimeline(table));
      } else {
        showProblem(container, "The table could not be read for the chart; reload the page.");
      }
    }
  }

  document.addEventListener("DOMContentLoaded", drawAll);
})();
