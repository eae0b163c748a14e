/**
 * One message (#28 view 2): who it went to and in what state, its timeline, and its content as the
 * recipient got it — the header fields and the text part as text, the attachments listed, and the
 * HTML part in a sandboxed frame served by the API with its own CSP (`allow-popups` so its links
 * open in a new tab, never `allow-scripts` or `allow-same-origin`: a script in tenant HTML never
 * runs, and the frame can never reach the console's cookie or DOM). Everything else the tenant
 * wrote is rendered as text by Preact, never as HTML.
 */
import { useState } from "preact/hooks"
import { type MessageContent, messagesApi, type MessageView, type TimelineEntry } from "../../api/sender.ts"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"
import { hrefOf, onLinkClick } from "../../router.ts"
import { bytes, when } from "../../components/format.ts"
import { useLoad } from "../../components/use-load.ts"

/** Exactly what #28 allows the message frame: popups (links in a new tab) that leave the sandbox. */
export const MESSAGE_FRAME_SANDBOX = "allow-popups allow-popups-to-escape-sandbox"

const entryText = (entry: TimelineEntry): string =>
  [entry.host === undefined ? "" : `via ${entry.host}`, entry.status ?? "", entry.reply ?? "", entry.url ?? ""]
    .filter((part) => part !== "")
    .join(" · ")

const Summary = ({ message }: { message: MessageView }) => (
  <section class="part" aria-labelledby="message-summary">
    <h2 id="message-summary">{message.subject === "" ? "(no subject)" : message.subject}</h2>
    <p>
      From {message.from.name === undefined ? message.from.email : `${message.from.name} <${message.from.email}>`} ·{" "}
      {message.channel} · accepted {when(message.created_at)} · <span class="record-value">{message.id}</span>
    </p>
    <ul>
      {message.recipients.map((r) => <li key={r.email}>{r.email}: <strong>{r.state}</strong></li>)}
    </ul>
  </section>
)

const Timeline = ({ message }: { message: MessageView }) => (
  <section class="part" aria-labelledby="message-timeline">
    <h2 id="message-timeline">Timeline</h2>
    <ol class="timeline">
      {message.timeline.map((entry, i) => (
        <li key={i}>
          <time dateTime={entry.at}>{when(entry.at)}</time> <strong>{entry.type}</strong> {entry.recipient}
          {entryText(entry) === "" ? null : <div>{entryText(entry)}</div>}
        </li>
      ))}
    </ol>
  </section>
)

const HtmlPart = ({ id }: { id: string }) => {
  const [images, setImages] = useState(false)
  return (
    <section class="part" aria-labelledby="message-html">
      <h2 id="message-html">HTML part</h2>
      <label class="checkbox">
        <input type="checkbox" checked={images} onChange={(e) => setImages(e.currentTarget.checked)} />
        Load remote images (tells the sender the message was read)
      </label>
      <iframe
        class="message-html"
        title="The message's HTML part"
        sandbox={MESSAGE_FRAME_SANDBOX}
        referrerpolicy="no-referrer"
        src={messagesApi.htmlUrl(id, images)}
      />
    </section>
  )
}

const Content = ({ content, id }: { content: MessageContent; id: string }) => (
  <>
    <section class="part" aria-labelledby="message-headers">
      <h2 id="message-headers">Header fields</h2>
      <pre class="message-text" tabIndex={0} aria-labelledby="message-headers">
        {content.headers.map((h) => `${h.name}: ${h.value}`).join("\n")}
      </pre>
    </section>
    <section class="part" aria-labelledby="message-text">
      <h2 id="message-text">Text part</h2>
      {content.text === null
        ? <p>This message has no text part.</p>
        : <pre class="message-text" tabIndex={0} aria-labelledby="message-text">{content.text}</pre>}
    </section>
    {content.html === null
      ? <section class="part"><h2>HTML part</h2><p>This message has no HTML part.</p></section>
      : <HtmlPart id={id} />}
    <section class="part" aria-labelledby="message-attachments">
      <h2 id="message-attachments">Attachments</h2>
      {content.attachments.length === 0
        ? <p>No attachments.</p>
        : (
          <ul>
            {content.attachments.map((a, i) => (
              <li key={i}>
                {a.filename} ({a.content_type}, {bytes(a.size)}){a.content_id === null ? null : ` · inline as cid:${a.content_id}`}
              </li>
            ))}
          </ul>
        )}
    </section>
  </>
)

export const MessageDetail = ({ id }: { id: string }) => {
  const message = useLoad(() => messagesApi.message(id), [id])
  const content = useLoad(() => messagesApi.content(id), [id])
  return (
    <div class="message">
      <a class="back" href={hrefOf("messages")} onClick={onLinkClick("messages")}>← All messages</a>
      {message.state.kind === "failed" ? <ErrorMessage error={message.state.error} /> : null}
      {message.state.kind === "loading" ? <p role="status">Loading the message…</p> : null}
      {message.state.kind === "ready"
        ? (
          <>
            <Summary message={message.state.value} />
            <Timeline message={message.state.value} />
          </>
        )
        : null}
      {content.state.kind === "failed"
        ? (
          <section class="part" aria-labelledby="message-content">
            <h2 id="message-content">Content</h2>
            <ErrorMessage error={content.state.error} />
            {/* A 429 (two contents in preparation for this key) or a 503 (every renderer busy) passes. */}
            <button type="button" class="secondary" onClick={content.reload}>Try again</button>
          </section>
        )
        : null}
      {content.state.kind === "loading" ? <p role="status">Composing the content…</p> : null}
      {content.state.kind === "ready" ? <Content content={content.state.value} id={id} /> : null}
    </div>
  )
}
