/**
 * Overview (#28 view 1): the account's mail over 24 h / 7 d / 30 d as a time chart, the quota used
 * against the plan, the active key's rate-limit headroom (the RateLimit headers of the stats
 * answer), whether sending is paused for the account's reputation and why, and the key's webhook
 * backlog. One stats answer and the usage record draw it all.
 */
import { useState } from "preact/hooks"
import { overviewApi, type RateHeadroom, type Stats, type StatsPeriod, type UsageRecord } from "../api/sender.ts"
import { ErrorMessage } from "../components/ErrorMessage.tsx"
import { useSignedIn } from "../session.tsx"
import type { ViewProps } from "./index.ts"
import { count, when } from "../components/format.ts"
import { shown, useLoad } from "../components/use-load.ts"
import { StatsChart } from "./sender/StatsChart.tsx"
import "./sender/sender.css"

const PERIODS: ReadonlyArray<{ value: StatsPeriod; label: string }> = [
  { value: "24h", label: "24 hours" },
  { value: "7d", label: "7 days" },
  { value: "30d", label: "30 days" }
]

const PeriodChoice = ({ onPeriod, period }: { period: StatsPeriod; onPeriod: (p: StatsPeriod) => void }) => (
  <fieldset class="period">
    <legend>Period</legend>
    {PERIODS.map((p) => (
      <label key={p.value}>
        <input type="radio" name="period" value={p.value} checked={period === p.value} onChange={() => onPeriod(p.value)} />
        {p.label}
      </label>
    ))}
  </fieldset>
)

const QuotaCard = ({ activeKeyId, usage }: { usage: UsageRecord; activeKeyId: string }) => {
  const plan = usage.subscriptions[0]
  const key = usage.keys.find((k) => k.id === activeKeyId) ?? usage.keys[0]
  if (key === undefined) return <div class="card"><h2>Quota</h2><p>No usage recorded yet.</p></div>
  const used = key.monthly_quota - key.quota_remaining
  return (
    <div class="card">
      <h2>Quota</h2>
      <p class="big">{count(used)} <span>of {count(key.monthly_quota)}</span></p>
      <label class="sr-only" for="quota-meter">Quota used</label>
      <meter id="quota-meter" class="meter" min={0} max={Math.max(1, key.monthly_quota)} value={used} />
      <p>Plan: {plan?.package_name ?? "none (1,000 a month)"}</p>
      <p>This key sent {count(key.sent_this_period)} this period; resets {when(usage.next_reset)}.</p>
    </div>
  )
}

const HeadroomCard = ({ headroom, usage }: { headroom: RateHeadroom | undefined; usage: UsageRecord | undefined }) => (
  <div class="card">
    <h2>Rate limit</h2>
    {headroom === undefined
      ? <p>{usage?.subscriptions[0]?.rate_per_min ?? 30} sends a minute; no window open now.</p>
      : (
        <>
          <p class="big">{count(headroom.remaining)} <span>of {count(headroom.limit)} left</span></p>
          <p>
            {headroom.remaining === headroom.limit
              ? "No send in the last minute."
              : `This minute's window resets ${when(new Date(headroom.reset * 1000).toISOString())}.`}
          </p>
        </>
      )}
  </div>
)

const ReputationCard = ({ stats }: { stats: Stats }) => (
  <div class="card">
    <h2>Reputation</h2>
    {stats.reputation.paused
      ? (
        <>
          <p><span class="status-badge bad">Sending paused</span></p>
          <p>{stats.reputation.reason ?? "No reason was recorded."} An administrator can lift the pause.</p>
        </>
      )
      : <p><span class="status-badge good">Sending</span> Bounce and complaint rates are within the limits.</p>}
  </div>
)

const BacklogCard = ({ stats }: { stats: Stats }) => (
  <div class="card">
    <h2>Webhook backlog</h2>
    <p class="big">{count(stats.webhook_backlog.pending)} <span>pending</span></p>
    <p>
      {stats.webhook_backlog.oldest_pending_at === null
        ? "Every delivery of this key's webhook is done."
        : `Oldest since ${when(stats.webhook_backlog.oldest_pending_at)}.`}
    </p>
  </div>
)

export const OverviewView = (_: ViewProps) => {
  const session = useSignedIn()
  const [period, setPeriod] = useState<StatsPeriod>("24h")
  const stats = useLoad(() => overviewApi.stats(period), [period, session.active_key_id])
  const usage = useLoad(() => overviewApi.usage(), [session.active_key_id])
  const current = shown(stats.state)
  const usageRecord = shown(usage.state)

  return (
    <div class="overview">
      <PeriodChoice period={period} onPeriod={setPeriod} />
      {stats.state.kind === "failed" ? <ErrorMessage error={stats.state.error} /> : null}
      {current === undefined
        ? (stats.state.kind === "loading" ? <p role="status">Loading the stats…</p> : null)
        : <StatsChart stats={current.stats} />}
      <div class="cards">
        {usage.state.kind === "failed"
          ? <div class="card"><h2>Quota</h2><ErrorMessage error={usage.state.error} /></div>
          : usageRecord === undefined ? null : <QuotaCard usage={usageRecord} activeKeyId={session.active_key_id} />}
        {current === undefined ? null : <HeadroomCard headroom={current.headroom} usage={usageRecord} />}
        {current === undefined ? null : <ReputationCard stats={current.stats} />}
        {current === undefined ? null : <BacklogCard stats={current.stats} />}
      </div>
    </div>
  )
}
