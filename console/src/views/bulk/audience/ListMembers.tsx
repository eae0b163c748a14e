/**
 * A list's members (#29 view 2), paged on the server and filtered by their membership status:
 * added by address or contact id (one a line, at most the API's 1,000 a call; on a list requiring
 * confirmation each new one is pending and gets the confirmation mail, the answer counts them),
 * removed one at a time, a pending one's confirmation sent again.
 */
import { useState } from "preact/hooks"
import { ApiError } from "../../../api/client.ts"
import { listsApi, type MailingList, MAX_MEMBERS_PER_ADD, type MembersAdded, type MembershipStatus } from "../../../api/bulk-audience.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useSubmit } from "../../../components/use-submit.ts"
import { useSignedIn } from "../../../session.tsx"

const linesOf = (text: string): Array<string> => text.split(/[\n,;]+/).map((line) => line.trim()).filter((line) => line !== "")

const addedText = (answer: MembersAdded, asked: number): string => {
  const parts = [`Added ${count(asked)} ${asked === 1 ? "address" : "addresses"}.`]
  if (answer.require_confirmation === 1) {
    parts.push(`${count(answer.confirmations_queued)} confirmation ${answer.confirmations_queued === 1 ? "mail" : "mails"} queued.`)
    if (answer.confirmations_withheld > 0) {
      parts.push(`${count(answer.confirmations_withheld)} had this list's confirmation in the last 24 hours and got none again.`)
    }
  }
  return parts.join(" ")
}

const AddMembers = ({ list, onAdded }: { list: MailingList; onAdded: () => void }) => {
  const [text, setText] = useState("")
  const [outcome, setOutcome] = useState<string | undefined>(undefined)
  const lines = linesOf(text)
  const { busy, error, onSubmit } = useSubmit(async () => {
    setOutcome(undefined)
    if (lines.length > MAX_MEMBERS_PER_ADD) {
      throw new Error(`At most ${count(MAX_MEMBERS_PER_ADD)} addresses at a time; this has ${count(lines.length)}. Use the contacts import for more.`)
    }
    const answer = await listsApi.addMembers(list.id, lines)
    setText("")
    setOutcome(addedText(answer, lines.length))
    onAdded()
  })
  // The API names the refused entry (contacts[3]): say which line it is.
  const line = error instanceof ApiError && error.param?.startsWith("contacts[") === true
    ? Number(error.param.slice("contacts[".length, -1)) + 1
    : undefined
  return (
    <form class="add-members" aria-label="Add members" onSubmit={onSubmit}>
      <div class="field">
        <label for="add-members">Addresses or contact ids to add, one a line</label>
        <textarea id="add-members" value={text} onInput={(e) => setText(e.currentTarget.value)} required
          aria-invalid={error === undefined ? undefined : true} aria-describedby={error === undefined ? undefined : "add-members-error"} />
      </div>
      <button type="submit" disabled={busy || lines.length === 0}>Add {lines.length > 1 ? `${count(lines.length)} members` : "member"}</button>
      {error === undefined ? null : (
        <div id="add-members-error">
          {line === undefined || Number.isNaN(line) ? null : <p class="error">Line {line}: nothing was added.</p>}
          <ErrorMessage error={error} />
        </div>
      )}
      {outcome === undefined ? null : <p role="status">{outcome}</p>}
    </form>
  )
}

const STATUS_CLASS: Record<MembershipStatus, string> = { confirmed: "good", pending: "wait", unsubscribed: "bad" }

export const ListMembers = ({ list, onChanged }: { list: MailingList; onChanged: () => void }) => {
  const session = useSignedIn()
  const [status, setStatus] = useState<MembershipStatus | "">("")
  const [offset, setOffset] = useState(0)
  const members = useLoad(
    () => listsApi.members(list.id, status === "" ? undefined : status, PAGE_SIZE, offset),
    [list.id, status, offset, session.active_key_id]
  )
  const changed = () => { members.reload(); onChanged() }
  const page = members.data
  return (
    <section class="part" aria-labelledby="list-members">
      <h3 id="list-members">Members</h3>
      <AddMembers list={list} onAdded={changed} />
      <div class="field member-filter">
        <label for="member-status">Membership</label>
        <select id="member-status" value={status} onChange={(e) => { setStatus(e.currentTarget.value as MembershipStatus | ""); setOffset(0) }}>
          <option value="">Any</option>
          <option value="pending">Pending</option>
          <option value="confirmed">Confirmed</option>
        </select>
      </div>
      <LoadStatus loaded={members} what="members" />
      {page === undefined ? null : (
        <>
          <ScrollTable label="Members">
            <table aria-busy={members.loading}>
              <thead>
                <tr>
                  <th scope="col">Address</th>
                  <th scope="col">Name</th>
                  <th scope="col">Membership</th>
                  <th scope="col">Contact</th>
                  <th scope="col"><span class="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((member) => (
                  <tr key={member.id}>
                    <td>{member.email}</td>
                    <td class="wrap">{member.name ?? ""}</td>
                    <td><span class={`status-badge ${STATUS_CLASS[member.membership_status]}`}>{member.membership_status}</span></td>
                    <td>{member.status}</td>
                    <td class="row-actions">
                      {member.membership_status === "pending" && list.require_confirmation === 1
                        ? (
                          <ActionButton run={() => listsApi.resendConfirmation(list.id, member.id)}>
                            Resend<span class="sr-only"> the confirmation to {member.email}</span>
                          </ActionButton>
                        )
                        : null}
                      <ActionButton danger confirm={`Remove ${member.email} from this list?`}
                        run={() => listsApi.removeMember(list.id, member.id)} onDone={changed}>
                        Remove<span class="sr-only"> {member.email}</span>
                      </ActionButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
          {page.items.length === 0 ? <p>{status === "" ? "This list has no members yet." : `No ${status} member.`}</p> : null}
          <Pager label="Members pages" total={page.total} offset={page.offset} limit={page.limit} onOffset={setOffset} busy={members.loading} />
        </>
      )}
    </section>
  )
}
