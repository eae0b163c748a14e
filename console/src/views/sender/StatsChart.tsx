/**
 * The overview's time chart: one line per series over the period's buckets, drawn as inline SVG
 * (no chart library: the first load stays small). Colours come from classes (the console's CSP
 * allows no inline style). The same numbers are in a table for screen readers and for reading
 * exact values; the SVG itself is one labelled image.
 */
import { STAT_SERIES, type Stats, type StatSeries } from "../../api/sender.ts"
import { count } from "../../components/format.ts"
import { HEIGHT, scalesFor, WIDTH, YGrid } from "../../components/line-chart.tsx"


const bucketLabel = (start: string, granularity: Stats["granularity"]): string => {
  const date = new Date(start)
  return granularity === "hour"
    ? date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString(undefined, { month: "short", day: "numeric", timeZone: "UTC" })
}

const totals = (stats: Stats): Record<StatSeries, number> => {
  const sums = Object.fromEntries(STAT_SERIES.map((s) => [s, 0])) as Record<StatSeries, number>
  for (const bucket of stats.buckets) for (const s of STAT_SERIES) sums[s] += bucket[s]
  return sums
}

export const StatsChart = ({ stats }: { stats: Stats }) => {
  const { buckets, granularity } = stats
  const scales = scalesFor(buckets.length, Math.max(0, ...buckets.flatMap((b) => STAT_SERIES.map((s) => b[s]))))
  const { x, y } = scales
  const sums = totals(stats)
  const summary = STAT_SERIES.map((s) => `${count(sums[s])} ${s}`).join(", ")
  const ticks = [0, Math.floor(buckets.length / 2), buckets.length - 1].filter((i, at, all) => i >= 0 && all.indexOf(i) === at)

  return (
    <figure class="chart-figure">
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Mail per ${granularity} over the period: ${summary}`}>
        <YGrid scales={scales} />
        {ticks.map((i) => (
          <text key={i} x={x(i)} y={HEIGHT - 8} text-anchor={i === 0 ? "start" : i === buckets.length - 1 ? "end" : "middle"}>
            {bucketLabel(buckets[i]!.start, granularity)}
          </text>
        ))}
        {STAT_SERIES.map((s) => (
          <polyline key={s} class={`s-${s}`} points={buckets.map((b, i) => `${x(i)},${y(b[s])}`).join(" ")} />
        ))}
      </svg>
      <figcaption>
        <ul class="legend">
          {STAT_SERIES.map((s) => (
            <li key={s}><span class={`swatch s-${s}`} aria-hidden="true" />{s}: {count(sums[s])}</li>
          ))}
        </ul>
      </figcaption>
      <details>
        <summary>The numbers per {granularity}</summary>
        <StatsTable stats={stats} />
      </details>
    </figure>
  )
}

const StatsTable = ({ stats }: { stats: Stats }) => (
  <div class="scroll-table" role="region" aria-label="Mail per bucket" tabIndex={0}>
    <table>
      <thead>
        <tr>
          <th scope="col">{stats.granularity === "hour" ? "Hour" : "Day"}</th>
          {STAT_SERIES.map((s) => <th key={s} scope="col" class="num">{s}</th>)}
        </tr>
      </thead>
      <tbody>
        {stats.buckets.map((b) => (
          <tr key={b.start}>
            <th scope="row">{bucketLabel(b.start, stats.granularity)}</th>
            {STAT_SERIES.map((s) => <td key={s} class="num">{count(b[s])}</td>)}
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)
