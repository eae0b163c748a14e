/**
 * A campaign past its draft: live progress while it sends (queued, sent, failed, opened, clicked;
 * asked again every few seconds while sending or scheduled and the page is visible, stopped when
 * it ends), the actions its state allows (the API's ALLOWED_FROM: no button for a call it would
 * refuse; a 409 that still comes, from a change elsewhere, shows its message beside the button),
 * and its analytics.
 */
import { ALLOWED_FROM, audienceApi, type Campaign, type CampaignAnalytics as Analytics, campaignsApi } from "../../../api/bulk-campaigns.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useVisiblePoll } from "../../../components/use-visible-poll.ts"
import { When } from "../../../components/When.tsx"
import { navigate } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import { CampaignAnalytics } from "./CampaignAnalytics.tsx"
import { StatusBadge } from "./StatusBadge.tsx"

/** How often a sending campaign's figures are asked again; a scheduled one only needs to notice its start. */
const POLL_SENDING_MS = 3000
const POLL_SCHEDULED_MS = 30_000

const Meter = ({ id, label, value, total }: { id: string; label: string; value: number; total: number }) => (
  <div class="cp-meter">
    <span id={`${id}-label`}>{label}</span>
    <progress aria-labelledby={`${id}-label`} max={Math.max(total, 1)} value={value} />
    <span class="num" data-figure={id}>{count(value)}</span>
  </div>
)

const Progress = ({ analytics, campaign }: { campaign: Campaign; analytics: Analytics | undefined }) => {
  const total = campaign.total_contacts ?? 0
  const queued = Math.max(0, total - campaign.sent_count - campaign.failed_count)
  return (
    <section aria-labelledby="progress-heading">
      <h2 id="progress-heading">Progress</h2>
      <p>{campaign.total_contacts === null ? "The recipients are counted when sending starts." : `${count(total)} recipients`}</p>
      <div class="cp-meters" aria-live="polite">
        <Meter id="queued" label={campaign.status === "cancelled" ? "Not sent" : "Queued"} value={queued} total={total} />
        <Meter id="sent" label="Sent" value={campaign.sent_count} total={total} />
        <Meter id="failed" label="Failed" value={campaign.failed_count} total={total} />
        <Meter id="opened" label="Opened" value={analytics?.opens_unique ?? 0} total={total} />
        <Meter id="clicked" label="Clicked" value={analytics?.clicks_unique ?? 0} total={total} />
      </div>
    </section>
  )
}

/** The lists' and the segment's names (the campaign holds their ids); the id when one is gone. */
const AudienceNames = ({ campaign }: { campaign: Campaign }) => {
  const names = useLoad(async () => {
    const named = async (what: string, id: string, read: (id: string) => Promise<{ name: string }>) =>
      read(id).then((item) => `${what} ${item.name}`, () => `${what} ${id}`)
    return Promise.all([
      ...campaign.list_ids.map((id) => named("list", id, audienceApi.list)),
      ...(campaign.segment_id === null ? [] : [named("segment", campaign.segment_id, audienceApi.segment)])
    ])
  }, [campaign.id])
  return <>{(names.data ?? [...campaign.list_ids, campaign.segment_id ?? ""].filter((id) => id !== "")).join(", ")}</>
}

/** The effective sender as a mail client shows it: `Name <address>`, with the reply address when there is one. */
const senderLine = (sender: Campaign["sender"]) => {
  if (sender.from_email === null) return "—"
  const from = sender.from_name === null || sender.from_name === "" ? sender.from_email : `${sender.from_name} <${sender.from_email}>`
  return sender.reply_to === null ? from : `${from} (replies to ${sender.reply_to})`
}

const Facts = ({ campaign }: { campaign: Campaign }) => (
  <dl class="op-facts">
    <dt>Status</dt>
    <dd><StatusBadge status={campaign.status} />{campaign.pause_reason === null ? null : ` (${campaign.pause_reason.replaceAll("_", " ")})`}</dd>
    <dt>Subject</dt><dd class="op-wrap">{campaign.subject ?? (campaign.template_id === null ? "—" : `From template ${campaign.template_id}`)}</dd>
    <dt>From</dt><dd class="op-wrap">{senderLine(campaign.sender)}</dd>
    <dt>Audience</dt><dd class="op-wrap"><AudienceNames campaign={campaign} /></dd>
    {campaign.scheduled_at === null ? null : <><dt>Scheduled for</dt><dd><When iso={campaign.scheduled_at} /></dd></>}
    <dt>Started</dt><dd><When iso={campaign.started_at} /></dd>
    <dt>Completed</dt><dd><When iso={campaign.completed_at} /></dd>
  </dl>
)

const Actions = ({ campaign, onDone }: { campaign: Campaign; onDone: () => void }) => {
  const allowed = (call: keyof typeof ALLOWED_FROM) => ALLOWED_FROM[call].includes(campaign.status)
  return (
    <div class="op-actions" role="group" aria-label="Campaign actions">
      {allowed("pause") ? <ActionButton run={() => campaignsApi.act(campaign.id, "pause")} onDone={onDone}>Pause</ActionButton> : null}
      {allowed("resume") ? <ActionButton run={() => campaignsApi.act(campaign.id, "resume")} onDone={onDone}>Resume</ActionButton> : null}
      {allowed("cancel")
        ? <ActionButton danger confirm="Cancel the campaign? Messages not yet attempted are dropped." run={() => campaignsApi.act(campaign.id, "cancel")} onDone={onDone}>Cancel campaign</ActionButton>
        : null}
      {allowed("delete")
        ? <ActionButton danger confirm="Delete the campaign and its tracking?" run={() => campaignsApi.remove(campaign.id)} onDone={() => navigate("campaigns")}>Delete</ActionButton>
        : null}
    </div>
  )
}

export const CampaignPage = ({ campaign, reload }: { campaign: Campaign; reload: () => void }) => {
  const session = useSignedIn()
  const analytics = useLoad(() => campaignsApi.analytics(campaign.id), [campaign.id, campaign.status, session.active_key_id])
  const live = campaign.status === "sending" || campaign.status === "scheduled"
  useVisiblePoll(live, campaign.status === "sending" ? POLL_SENDING_MS : POLL_SCHEDULED_MS, () => {
    reload()
    analytics.reload()
  })
  return (
    <div>
      <h2 class="cp-title op-wrap">{campaign.name}</h2>
      <Facts campaign={campaign} />
      <Actions campaign={campaign} onDone={reload} />
      <Progress campaign={campaign} analytics={analytics.data} />
      <LoadStatus loaded={analytics} what="the analytics" />
      {analytics.data === undefined ? null : <CampaignAnalytics analytics={analytics.data} csvUrl={campaignsApi.csvUrl(campaign.id)} />}
    </div>
  )
}
