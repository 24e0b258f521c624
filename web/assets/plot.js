// A thin wrapper over uPlot (vendored, loaded as window.uPlot by a classic
// <script> before the page's module).  Labels given to uPlot are ours or
// go through visible(); uPlot itself sets them with textContent.
import { fmtSI, h, visible } from './common.js';

export const available = () => typeof window.uPlot === 'function';

// Colour-blind-safe pair (Okabe-Ito blue and vermillion), both AA on white.
export const COLORS = { base: '#0060a8', patched: '#b8420b', line: '#1f4e79', mark: '#b3261e' };

const AXIS = { stroke: '#333', grid: { stroke: '#e3e3e3', width: 1 }, ticks: { stroke: '#ccc', width: 1 } };

// chart(target, {data, series: [{label, color, width, dash, points}],
//   xLabel, yLabel, xValue (legend), xIncrs, xRange, time, height, draw(u)})
//   -> uPlot or null.
// Drag selects an x range to zoom, double-click resets (uPlot's cursor).
export function chart(target, o) {
  if (!available()) {
    target.append(h('p', { class: 'none' }, 'chart unavailable (uPlot did not load)'));
    return null;
  }
  const height = o.height || 240;
  const width = () => Math.max(260, Math.floor(target.clientWidth || 640));
  const opts = {
    width: width(),
    height,
    scales: { x: { time: !!o.time, ...(o.xRange ? { range: () => o.xRange } : {}) } },
    cursor: { drag: { x: true, y: false, setScale: true } },
    legend: { show: o.legend !== false },
    series: [
      { label: visible(o.xLabel || 'x'), value: o.xValue || ((u, v) => (v === null || v === undefined ? '—' : String(v))) },
      ...o.series.map((s) => ({
        label: visible(s.label),
        stroke: s.color,
        width: s.width === undefined ? 1 : s.width,
        dash: s.dash,
        spanGaps: true,
        points: { show: s.points !== false, size: s.size || 6, stroke: s.color, fill: s.fill || s.color, width: 1 },
        value: (u, v) => (v === null || v === undefined ? '—' : fmtSI(v)),
      })),
    ],
    axes: [
      { ...AXIS, label: visible(o.xLabel || ''), labelSize: 20, ...(o.xIncrs ? { incrs: o.xIncrs } : {}) },
      { ...AXIS, label: visible(o.yLabel || ''), labelSize: 20, size: 64, values: (u, vals) => vals.map(fmtSI) },
    ],
    hooks: { draw: o.draw ? [o.draw] : [], destroy: [() => ro && ro.disconnect()] },
  };
  let ro = null;
  // time axes in UTC, as every date on these pages
  if (o.time) opts.tzDate = (ts) => window.uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC');
  const u = new window.uPlot(opts, o.data, target);
  // follow the container's width (phone rotation, window resize)
  if (typeof ResizeObserver === 'function') {
    let w = opts.width;
    ro = new ResizeObserver(() => {
      const nw = width();
      if (Math.abs(nw - w) > 4) { w = nw; u.setSize({ width: nw, height }); }
    });
    ro.observe(target);
  }
  return u;
}

// Draw inside the plotting area only, in canvas pixels.
export function inPlot(u, fn) {
  const c = u.ctx;
  c.save();
  c.beginPath();
  c.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
  c.clip();
  fn(c, window.devicePixelRatio || 1);
  c.restore();
}

// A vertical line at x value xv, with a short text label at the top.
export function vline(u, xv, color, label) {
  const x = u.valToPos(xv, 'x', true);
  if (!Number.isFinite(x)) return;
  inPlot(u, (c, px) => {
    c.strokeStyle = color;
    c.lineWidth = 2 * px;
    c.setLineDash([6 * px, 4 * px]);
    c.beginPath();
    c.moveTo(x, u.bbox.top);
    c.lineTo(x, u.bbox.top + u.bbox.height);
    c.stroke();
    if (label) {
      c.setLineDash([]);
      c.fillStyle = color;
      c.font = `${12 * px}px system-ui, sans-serif`;
      c.fillText(label, x + 4 * px, u.bbox.top + 14 * px);
    }
  });
}
