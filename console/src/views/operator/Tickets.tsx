/**
 * Support tickets: the account's list, a form to open one, and one ticket's conversation with a
 * reply. Ticket text is the customer's and support's own: rendered as text (pre-wrap), never markup.
 */
import { useState } from "preact/hooks"
import { type TicketPriority, usageApi } from "../../api/operator.ts"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"
import { Field } from "../../components/Field.tsx"
import { hrefOf, navigate, onLinkClick } from "../../router.ts"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { When } from "../../components/When.tsx"
import { useLoad } from "../../components/use-load.ts"
import { useSubmit } from "../../components/use-submit.ts"

const TextArea = ({ id, label, value, onValue }: { id: string; label: string; value: string; onValue: (value: string) => void }) => (
  <div class="op-field">
    <label for={id}>{label}</label>
    <textarea id={id} required maxLength={20_000} value={value} onInput={(event) => onValue(event.currentTarget.value)} />
  </div>
)

const OpenTicket = () => {
  const [subject, setSubject] = useState("")
  const [body, setBody] = useState("")
  const [priority, setPriority] = useState<TicketPriority>("normal")
  const { busy, error, onSubmit: submit } = useSubmit(async () => {
    const ticket = await usageApi.openTicket({ subject, body, priority })
    navigate(`usage/tickets/${ticket.id}`)
  })
  return (
    <details>
      <summary>Open a ticket</summary>
      <form class="op-inline-form" onSubmit={submit}>
        <Field id="ticket-subject" label="Subject" value={subject} onValue={setSubject} required maxLength={200} />
        <TextArea id="ticket-body" label="What happened" value={body} onValue={setBody} />
        <div class="op-field">
          <label for="ticket-priority">Priority</label>
          <select id="ticket-priority" value={priority} onChange={(event) => setPriority(event.currentTarget.value as TicketPriority)}>
            <option value="low">low</option>
            <option value="normal">normal</option>
            <option value="high">high</option>
            <option value="urgent">urgent</option>
          </select>
        </div>
        <button type="submit" disabled={busy}>Open ticket</button>
        <ErrorMessage error={error} id="ticket-error" />
      </form>
    </details>
  )
}

export const Tickets = () => {
  const tickets = useLoad(() => usageApi.tickets(), [])
  return (
    <section class="op-section" aria-labelledby="tickets-heading">
      <h2 id="tickets-heading">Support tickets</h2>
      <OpenTicket />
      <LoadStatus loaded={tickets} what="the tickets" />
      {tickets.data === undefined ? null : tickets.data.items.length === 0 ? <p>No tickets yet.</p> : (
        <ScrollTable label="Support tickets"><table>
          <thead><tr><th scope="col">Subject</th><th scope="col">Status</th><th scope="col">Priority</th><th scope="col">Updated</th></tr></thead>
          <tbody>
            {tickets.data.items.map((ticket) => (
              <tr key={ticket.id}>
                <td class="op-wrap"><a href={hrefOf(`usage/tickets/${ticket.id}`)} onClick={onLinkClick(`usage/tickets/${ticket.id}`)}>{ticket.subject}</a></td>
                <td>{ticket.status}</td>
                <td>{ticket.priority}</td>
                <td><When iso={ticket.updated_at} /></td>
              </tr>
            ))}
          </tbody>
        </table></ScrollTable>
      )}
    </section>
  )
}

export const TicketView = ({ id }: { id: string }) => {
  const ticket = useLoad(() => usageApi.ticket(id), [id])
  const [reply, setReply] = useState("")
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await usageApi.reply(id, reply)
      setReply("")
      ticket.reload()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const t = ticket.data
  return (
    <div>
      <p><a href={hrefOf("usage")} onClick={onLinkClick("usage")}>Back to usage and plan</a></p>
      <LoadStatus loaded={ticket} what="the ticket" />
      {t === undefined ? null : (
        <div>
          <h2 class="op-wrap">{t.subject}</h2>
          <p>{t.status}, {t.priority} priority, {t.category}.</p>
          {t.messages.map((message) => (
            <article class="op-message" key={message.id} aria-label={`${message.author === "support" ? "Support" : "You"}, ${new Date(message.created_at).toLocaleString()}`}>
              <p><strong>{message.author === "support" ? "Support" : "You"}</strong> · <When iso={message.created_at} /></p>
              <p class="op-message-body">{message.body}</p>
            </article>
          ))}
          <form class="op-inline-form" onSubmit={(event) => void submit(event)}>
            <TextArea id="ticket-reply" label="Reply" value={reply} onValue={setReply} />
            <button type="submit" disabled={busy}>Send reply</button>
            <ErrorMessage error={error} id="reply-error" />
          </form>
        </div>
      )}
    </div>
  )
}
