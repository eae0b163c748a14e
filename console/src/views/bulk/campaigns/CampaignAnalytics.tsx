/**
 * A campaign's analytics: rates, an opens and clicks timeline drawn as inline SVG (no chart
 * library; the numbers also in a table), the most clicked links, and the per-recipient CSV (a plain
 * link: the session cookie authenticates the download). Link URLs are the tenant's text: shown as
 * text, never followed from here.
 */
import type { CampaignAnalytics as Analytics } from "../../../api/bulk-campaigns.ts"
import { count } from "../../../components/format.ts"
import { HEIGHT, scalesFor, WIDTH, YGrid } from "../../../components/line-chart.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"

const SERIES = ["opens", "clicks"] as const

const percent = (fraction: number) => `${(fraction * 100).toFixed(1)} %`

const label = (iso: string) => new Date(iso).toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })

const Timeline = ({ timeline }: { timeline: Analytics["timeline"] }) => {
  if (timeline.length === 0) return <p>No opens or clicks yet.</p>
  const scales = scalesFor(timeline.length, Math.max(0, ...timeline.flatMap((b) => [b.opens, b.clicks])))
  const { x, y } = scales
  const sum = (s: typeof SERIES[number]) => timeline.reduce((total, b) => total + b[s], 0)
  const last = timeline.length - 1
  return (
    <figure class="chart-figure">
      <svg class="chart cp-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img"
        aria-label={`Opens and clicks over time: ${count(sum("opens"))} opens, ${count(sum("clicks"))} clicks`}>
        <YGrid scales={scales} />
        <text x={x(0)} y={HEIGHT - 8} text-anchor="start">{label(timeline[0]!.at)}</text>
        {last > 0 ? <text x={x(last)} y={HEIGHT - 8} text-anchor="end">{label(timeline[last]!.at)}</text> : null}
        {SERIES.map((s) => timeline.length === 1
          ? <circle key={s} class={`cp-${s}`} cx={x(0)} cy={y(timeline[0]![s])} r={4} />
          : <polyline key={s} class={`cp-${s}`} points={timeline.map((b, i) => `${x(i)},${y(b[s])}`).join(" ")} />)}
      </svg>
      <figcaption>
        <ul class="legend">
          {SERIES.map((s) => <li key={s}><span class={`swatch cp-${s}`} aria-hidden="true" />{s}: {count(sum(s))}</li>)}
        </ul>
      </figcaption>
      <details>
        <summary>The numbers per period</summary>
        <ScrollTable label="Opens and clicks per period">
          <table>
            <thead><tr><th scope="col">From</th><th scope="col" class="num">Delivered</th><th scope="col" class="num">Opens</th><th scope="col" class="num">Clicks</th></tr></thead>
            <tbody>
              {timeline.map((b) => (
                <tr key={b.at}><th scope="row">{label(b.at)}</th><td class="num">{count(b.delivered)}</td><td class="num">{count(b.opens)}</td><td class="num">{count(b.clicks)}</td></tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      </details>
    </figure>
  )
}

export const CampaignAnalytics = ({ analytics, csvUrl }: { analytics: Analytics; csvUrl: string }) => {
  const rates: ReadonlyArray<readonly [string, number]> = [
    ["Open rate", analytics.rates.open],
    ["Click rate", analytics.rates.ctr],
    ["Clicks per open", analytics.rates.ctor],
    ["Bounce rate", analytics.rates.bounce],
    ["Complaint rate", analytics.rates.complaint],
    ["Unsubscribe rate", analytics.rates.unsub]
  ]
  return (
    <section aria-labelledby="analytics-heading">
      <h2 id="analytics-heading">Analytics</h2>
      <dl class="cp-rates">
        <div><dt>Delivered</dt><dd data-figure="delivered">{count(analytics.delivered)}</dd></div>
        <div><dt>Opened (people)</dt><dd>{count(analytics.opens_unique)}</dd></div>
        <div><dt>Clicked (people)</dt><dd>{count(analytics.clicks_unique)}</dd></div>
        <div><dt>Bounces</dt><dd>{count(analytics.bounces)}</dd></div>
        <div><dt>Unsubscribes</dt><dd data-figure="unsubscribes">{count(analytics.unsubs)}</dd></div>
        {rates.map(([name, value]) => <div key={name}><dt>{name}</dt><dd>{percent(value)}</dd></div>)}
      </dl>
      <h3>Opens and clicks over time</h3>
      <Timeline timeline={analytics.timeline} />
      <h3>Top links</h3>
      {analytics.top_links.length === 0 ? <p>No link clicked yet.</p> : (
        <ScrollTable label="Top links">
          <table>
            <thead><tr><th scope="col">Link</th><th scope="col" class="num">People</th><th scope="col" class="num">Clicks</th></tr></thead>
            <tbody>
              {analytics.top_links.map((link) => (
                <tr key={link.url}><td class="wrap">{link.url}</td><td class="num">{count(link.clicks_unique)}</td><td class="num">{count(link.clicks_total)}</td></tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
      <p>
        <a href={csvUrl} download>Download the per-recipient CSV</a> (address, status, sent, first opened, first clicked;
        open and click detail is kept {analytics.detail_window_days} days).
      </p>
    </section>
  )
}
