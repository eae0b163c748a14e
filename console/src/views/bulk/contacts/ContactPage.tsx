/**
 * One contact (#29 view 1): its fields and custom fields (metadata), the lists it is on and its
 * status there, its engagement history and the messages this key sent it (each opening the
 * console's message view), both paged on the server; edit and delete. Everything the tenant or
 * an import wrote is rendered as text.
 */
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { type Contact, contactsApi, type ContactMessage, type EngagementItem } from "../../../api/bulk-contacts.ts"
import type { Page } from "../../../api/sender.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { When } from "../../../components/When.tsx"
import { type Loaded, useLoad } from "../../../components/use-load.ts"
import { hrefOf, navigate, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import { STATUS_CLASS } from "./ContactList.tsx"
import { ContactEdit } from "./ContactEdit.tsx"

/** Rows per page of the history and the messages: a contact page shows a glance, the pager the rest. */
const HISTORY_PAGE = 20

/** A metadata value as text: strings as they are, anything else as compact JSON. */
const valueText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value))

const Fields = ({ contact }: { contact: Contact }) => (
  <section class="part" aria-labelledby="contact-fields">
    <h2 id="contact-fields">Fields</h2>
    <dl class="contact-fields">
      <dt>Email</dt><dd>{contact.email}</dd>
      <dt>Name</dt><dd>{contact.name ?? "—"}</dd>
      <dt>Status</dt><dd><span class={`status-badge ${STATUS_CLASS[contact.status]}`}>{contact.status}</span></dd>
      <dt>Tags</dt><dd>{contact.tags.length === 0 ? "—" : contact.tags.join(", ")}</dd>
      <dt>Added</dt><dd><When iso={contact.created_at} /></dd>
      <dt>Changed</dt><dd><When iso={contact.updated_at} /></dd>
      <dt>Id</dt><dd class="record-value">{contact.id}</dd>
    </dl>
    <h3>Custom fields</h3>
    {Object.keys(contact.metadata).length === 0
      ? <p>None.</p>
      : (
        <dl class="contact-fields">
          {Object.entries(contact.metadata).map(([key, value]) => [<dt key={`k-${key}`}>{key}</dt>, <dd key={`v-${key}`}>{valueText(value)}</dd>])}
        </dl>
      )}
  </section>
)

const Lists = ({ contact }: { contact: Contact }) => (
  <section class="part" aria-labelledby="contact-lists">
    <h2 id="contact-lists">Lists</h2>
    {contact.lists.length === 0
      ? <p>On no list.</p>
      : (
        <ScrollTable label="Lists of this contact">
          <table>
            <thead><tr><th scope="col">List</th><th scope="col">Status</th></tr></thead>
            <tbody>
              {contact.lists.map((list) => (
                <tr key={list.list_id}>
                  <td><a href={hrefOf(`lists/${list.list_id}`)} onClick={onLinkClick(`lists/${list.list_id}`)}>{list.list_id}</a></td>
                  <td><span class={`status-badge ${list.status === "confirmed" ? "good" : "wait"}`}>{list.status}</span></td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
  </section>
)

const messageLink = (id: string) => <a href={hrefOf(`messages/${id}`)} onClick={onLinkClick(`messages/${id}`)}>{id}</a>

/** A paged section of the contact page: its own pager, its own load and error. */
const PagedSection = <T,>({ children, empty, id, loaded, onOffset, title }: {
  id: string
  title: string
  empty: string
  loaded: Loaded<Page<T>>
  onOffset: (offset: number) => void
  children: (items: ReadonlyArray<T>) => ComponentChildren
}) => {
  const page = loaded.data
  return (
    <section class="part" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <LoadStatus loaded={loaded} what={title.toLowerCase()} />
      {page === undefined ? null : page.total === 0 ? <p>{empty}</p> : (
        <>
          <ScrollTable label={title}>{children(page.items)}</ScrollTable>
          <Pager label={`${title} pages`} total={page.total} offset={page.offset} limit={page.limit} onOffset={onOffset} busy={loaded.loading} />
        </>
      )}
    </section>
  )
}

const Engagement = ({ email }: { email: string }) => {
  const [offset, setOffset] = useState(0)
  const loaded = useLoad(() => contactsApi.engagement(email, HISTORY_PAGE, offset), [email, offset])
  return (
    <PagedSection<EngagementItem> id="contact-engagement" title="Engagement history" empty="No opens, clicks, bounces, complaints or unsubscribes yet." loaded={loaded} onOffset={setOffset}>
      {(items) => (
        <table>
          <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Message</th><th scope="col">Detail</th></tr></thead>
          <tbody>
            {items.map((item, index) => (
              <tr key={`${item.at}-${index}`}>
                <td><When iso={item.at} /></td>
                <td>{item.type}</td>
                <td>{item.message_id === undefined ? "—" : messageLink(item.message_id)}</td>
                <td class="wrap">{item.detail ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </PagedSection>
  )
}

const Messages = ({ email }: { email: string }) => {
  const [offset, setOffset] = useState(0)
  const loaded = useLoad(() => contactsApi.messages(email, HISTORY_PAGE, offset), [email, offset])
  return (
    <PagedSection<ContactMessage> id="contact-messages" title="Messages sent" empty="This key has sent this contact no message." loaded={loaded} onOffset={setOffset}>
      {(items) => (
        <table>
          <thead><tr><th scope="col">Sent</th><th scope="col">Subject</th><th scope="col">Status</th></tr></thead>
          <tbody>
            {items.map((message) => (
              <tr key={message.id}>
                <td><When iso={message.created_at} /></td>
                <td class="wrap">
                  <a href={hrefOf(`messages/${message.id}`)} onClick={onLinkClick(`messages/${message.id}`)}>
                    {message.subject === "" ? "(no subject)" : message.subject}
                  </a>
                </td>
                <td>{message.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </PagedSection>
  )
}

export const ContactPage = ({ id }: { id: string }) => {
  const session = useSignedIn()
  const loaded = useLoad(() => contactsApi.read(id), [id, session.active_key_id])
  const contact = loaded.data
  return (
    <>
      <a class="back" href={hrefOf("contacts")} onClick={onLinkClick("contacts")}>← All contacts</a>
      <LoadStatus loaded={loaded} what="the contact" />
      {contact === undefined ? null : (
        <>
          <h2 class="contact-title">{contact.email}</h2>
          <Fields contact={contact} />
          <Lists contact={contact} />
          <ContactEdit contact={contact} onSaved={loaded.reload} />
          <Engagement email={contact.email} />
          <Messages email={contact.email} />
          <section class="part" aria-labelledby="contact-delete">
            <h2 id="contact-delete">Delete</h2>
            <p>Deleting removes the contact from this key and from its lists; a suppression of the address stays.</p>
            <ActionButton danger confirm={`Delete ${contact.email}?`} run={() => contactsApi.remove(contact.id)} onDone={() => navigate("contacts")}>
              Delete contact
            </ActionButton>
          </section>
        </>
      )}
    </>
  )
}
