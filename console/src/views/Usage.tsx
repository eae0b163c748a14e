/**
 * Usage and plan (#28 "Views" 6): the usage record, a plan change (confirmed with the password),
 * DMARC reports when the plan has them (a table, and per report a pass/fail chart by source), and
 * support tickets (list, open, read, reply).
 *
 *   /console/usage                 usage, plan, DMARC reports, tickets
 *   /console/usage/dmarc/{id}      one DMARC report: its records and the chart
 *   /console/usage/tickets/{id}    one ticket: its messages and a reply
 */
import { DmarcReportView, DmarcReports } from "./operator/Dmarc.tsx"
import { PlanChange } from "./operator/PlanChange.tsx"
import { TicketView, Tickets } from "./operator/Tickets.tsx"
import { UsageRecord } from "./operator/UsageRecord.tsx"
import { usageApi } from "../api/operator.ts"
import { useLoad } from "../components/use-load.ts"
import type { ViewProps } from "./index.ts"
import "./operator/operator.css"

export const UsageView = ({ rest }: ViewProps) => {
  const [section, id] = rest
  if (section === "dmarc" && id !== undefined) return <DmarcReportView id={id} />
  if (section === "tickets" && id !== undefined) return <TicketView id={id} />
  return <UsageAndPlan />
}

/** The record and the plan form share one load of the usage record (one request, one truth). */
const UsageAndPlan = () => {
  const usage = useLoad(() => usageApi.usage(), [])
  return (
    <div>
      <UsageRecord usage={usage} />
      <PlanChange usage={usage} />
      <DmarcReports />
      <Tickets />
    </div>
  )
}
