/**
 * Campaigns (#29 "Views" 5), as the active key (bulk resources belong to the key that made them;
 * the shell names it, and every list reloads when it changes).
 *
 *   /console/campaigns          the key's campaigns, paged on the server
 *   /console/campaigns/new      the guided flow for a new draft
 *   /console/campaigns/{id}     a draft: the flow; else its progress, actions and analytics
 */
import { useState } from "preact/hooks"
import { campaignsApi } from "../../../api/bulk-campaigns.ts"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { When } from "../../../components/When.tsx"
import { hrefOf, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import type { ViewProps } from "../../index.ts"
import { CampaignFlow } from "./CampaignFlow.tsx"
import { CampaignPage } from "./CampaignPage.tsx"
import { StatusBadge } from "./StatusBadge.tsx"
import "../../sender/sender.css"
import "../../operator/operator.css"
import "./campaigns.css"

const CampaignList = () => {
  const session = useSignedIn()
  const [offset, setOffset] = useState(0)
  const page = useLoad(() => campaignsApi.list(PAGE_SIZE, offset), [offset, session.active_key_id])
  return (
    <div>
      <p><a class="cp-button" href={hrefOf("campaigns/new")} onClick={onLinkClick("campaigns/new")}>New campaign</a></p>
      <LoadStatus loaded={page} what="the campaigns" />
      {page.data === undefined ? null : page.data.total === 0 && offset === 0 ? <p>No campaign yet for this key.</p> : (
        <>
          <ScrollTable label="Campaigns">
            <table aria-busy={page.loading}>
              <thead>
                <tr>
                  <th scope="col">Name</th><th scope="col">Status</th><th scope="col" class="num">Recipients</th>
                  <th scope="col" class="num">Sent</th><th scope="col" class="num">Failed</th><th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {page.data.items.map((c) => (
                  <tr key={c.id}>
                    <td class="wrap"><a href={hrefOf(`campaigns/${c.id}`)} onClick={onLinkClick(`campaigns/${c.id}`)}>{c.name}</a></td>
                    <td><StatusBadge status={c.status} /></td>
                    <td class="num">{c.total_contacts === null ? "—" : count(c.total_contacts)}</td>
                    <td class="num">{count(c.sent_count)}</td>
                    <td class="num">{count(c.failed_count)}</td>
                    <td><When iso={c.created_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
          <Pager label="Campaigns pages" total={page.data.total} offset={offset} limit={PAGE_SIZE} onOffset={setOffset} busy={page.loading} />
        </>
      )}
    </div>
  )
}

const OneCampaign = ({ id }: { id: string }) => {
  const session = useSignedIn()
  const campaign = useLoad(() => campaignsApi.get(id), [id, session.active_key_id])
  const shown = campaign.data?.id === id ? campaign.data : undefined
  return (
    <div>
      <p><a href={hrefOf("campaigns")} onClick={onLinkClick("campaigns")}>All campaigns</a></p>
      <LoadStatus loaded={campaign} what="the campaign" />
      {shown === undefined ? null : shown.status === "draft"
        ? <CampaignFlow key={shown.id} campaign={shown} onChanged={campaign.reload} />
        : <CampaignPage campaign={shown} reload={campaign.reload} />}
    </div>
  )
}

export const CampaignsView = ({ rest }: ViewProps) => {
  const [id] = rest
  if (id === undefined) return <CampaignList />
  if (id === "new") {
    return (
      <div>
        <p><a href={hrefOf("campaigns")} onClick={onLinkClick("campaigns")}>All campaigns</a></p>
        <CampaignFlow campaign={undefined} onChanged={() => undefined} />
      </div>
    )
  }
  return <OneCampaign id={decodeURIComponent(id)} />
}
