/**
 * What the console's inline-SVG line charts share (the overview's stats, a campaign's opens and
 * clicks): one viewBox, a y-axis top that is a round number, the scales from points to the
 * viewBox, and the y grid with its labels. No chart library: the first load stays small.
 */
import { count } from "./format.ts"

// A viewBox narrow enough that its 12-unit labels stay readable when the chart shrinks to a phone.
export const WIDTH = 520
export const HEIGHT = 220
export const PAD = { left: 44, right: 14, top: 12, bottom: 28 }

/** A y-axis top that is a round number at or above the highest count (at least 2: three distinct labels). */
export const niceMax = (max: number): number => {
  if (max <= 2) return 2
  const magnitude = 10 ** Math.floor(Math.log10(max))
  return ([1, 2, 5, 10].find((s) => s * magnitude >= max) ?? 10) * magnitude
}

export interface Scales {
  /** The x of the i-th of `points` (one point sits in the middle). */
  readonly x: (i: number) => number
  /** The y of a count, from 0 at the axis to `top` at the plot's top. */
  readonly y: (n: number) => number
  readonly top: number
}

/** Scales for `points` points whose highest count is `max`. */
export const scalesFor = (points: number, max: number): Scales => {
  const top = niceMax(max)
  const plotWidth = WIDTH - PAD.left - PAD.right
  const plotHeight = HEIGHT - PAD.top - PAD.bottom
  return {
    top,
    x: (i) => PAD.left + (points <= 1 ? plotWidth / 2 : (i * plotWidth) / (points - 1)),
    y: (n) => PAD.top + plotHeight - (n / top) * plotHeight
  }
}

/** Grid lines at 0, half and the top, their counts, and the x axis. */
export const YGrid = ({ scales }: { scales: Scales }) => (
  <>
    {[0, 0.5, 1].map((f) => (
      <g key={f}>
        <line class="grid" x1={PAD.left} x2={WIDTH - PAD.right} y1={scales.y(scales.top * f)} y2={scales.y(scales.top * f)} />
        <text x={PAD.left - 6} y={scales.y(scales.top * f) + 4} text-anchor="end">{count(Math.round(scales.top * f))}</text>
      </g>
    ))}
    <line class="axis" x1={PAD.left} x2={WIDTH - PAD.right} y1={scales.y(0)} y2={scales.y(0)} />
  </>
)
