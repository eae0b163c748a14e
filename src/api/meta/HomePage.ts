/**
 * GET /: what someone who opens the appliance in a browser sees — its version, its health, where
 * the reference pages are, and the first steps. Plain HTML with no script (it works with no
 * internet and no JavaScript); every value in it is escaped.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { escapeHtml } from "../../lib/html.ts"
import { VERSION } from "../../version.ts"
import { type AreaName, areaDocument } from "../docs/documents.ts"
import { checkHealth } from "./Http.ts"

const AREAS: ReadonlyArray<AreaName> = ["transactional", "bulk", "platform"]

/** Each area's reference page, titled and described as its OpenAPI document is. */
const referencePages = (): ReadonlyArray<readonly [path: string, title: string]> =>
  AREAS.map((area) => {
    const { description, title } = areaDocument(area).info
    // Its first paragraph: the rest states the errors every operation can answer.
    const summary = (description ?? "").split("\n\n")[0]
    return [`/reference/${area}/`, `${title.replace(/^Herald — /, "")}: ${summary}`] as const
  })

const FOR_MACHINES: ReadonlyArray<readonly [path: string, title: string]> = [
  ["/llms.txt", "/llms.txt: the API in plain text, for LLMs and scripts"],
  ["/llms-full.txt", "/llms-full.txt: every endpoint and event in full"],
  ["/openapi/openapi.yaml", "/openapi/openapi.yaml: the contract (every client endpoint) as OpenAPI YAML"],
  ["/health", "/health"],
  ["/version", "/version"]
]

const links = (items: ReadonlyArray<readonly [string, string]>) =>
  items.map(([href, title]) => `<li><a href="${escapeHtml(href)}">${escapeHtml(title)}</a></li>`).join("\n")

const STYLE = "body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}" +
  "pre{background:#f4f4f4;padding:.75rem;white-space:pre-wrap;overflow-wrap:anywhere}.ok{color:#060}.down{color:#a00}"

/** The page for `health` (null: healthy; otherwise why not), with commands against `baseUrl`. */
export const renderHomePage = (
  baseUrl: string,
  references: ReadonlyArray<readonly [string, string]>,
  health: string | null
): string => {
  const api = escapeHtml(baseUrl)
  const status = health === null
    ? `<span class="ok">ok</span> (the database answers)`
    : `<span class="down">unavailable</span>: ${escapeHtml(health)}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Herald ${escapeHtml(VERSION)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Herald</h1>
<p>Email delivery appliance, version <strong>${escapeHtml(VERSION)}</strong>. Health: ${status}.</p>
<p><a href="/console/">Open the console</a>: sign in to see your messages, domains, keys and usage in the browser.</p>
<h2>Reference</h2>
<ul>
${links(references)}
</ul>
<ul>
${links(FOR_MACHINES)}
</ul>
<h2>First steps</h2>
<ol>
<li><p>Take the admin API key the log showed once at the first start (or the token of
<code>HERALD_BOOTSTRAP_KEY</code>). More keys, from a shell beside the appliance:
<code>npm run herald -- keys create --account acc_… --label deploy</code>.</p>
<pre>KEY=hrld_…</pre></li>
<li><p>Add your sending domain; the answer lists the DNS records to publish.</p>
<pre>curl -s -X POST ${api}/v1/client/domains -H "Authorization: Bearer $KEY" \\
  -H 'content-type: application/json' -d '{"domain":"acme.example"}'</pre></li>
<li><p>Send a first message. Addresses at <code>simulator.herald.invalid</code> (<code>delivered@</code>,
<code>bounce@</code>, <code>complaint@</code>, <code>defer@</code>, <code>suppressed@</code>) never leave
the appliance and need no DNS.</p>
<pre>curl -s -X POST ${api}/v1/mail/send -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\
  -d '{"from":{"email":"hello@acme.example"},"to":[{"email":"delivered@simulator.herald.invalid"}],"subject":"Hi","text":"Hello"}'</pre></li>
<li><p>See what happened to it in the audit log.</p>
<pre>curl -s ${api}/v1/mail/audit -H "Authorization: Bearer $KEY"</pre></li>
</ol>
<p>The README of the source tree and its <code>docs/</code> folder explain the configuration (<code>docs/configuration.md</code>), the DNS records and the operator commands (<code>docs/operating.md</code>).</p>
</body>
</html>
`
}

/** GET / with no key (DESIGN.md "Public paths"); the health is read when the page is asked for. */
export const HomePageLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { baseUrl } = yield* AppConfig
    // Read from the areas' OpenAPI documents when the page is first asked for: building the three
    // documents at start-up cost ~0.1 s of every start (a profile of the appliance's start).
    let references: ReturnType<typeof referencePages> | undefined
    yield* router.get(
      "/",
      checkHealth(sql).pipe(
        Effect.as(null),
        Effect.catchAll((error) => Effect.succeed(error.message)),
        Effect.map((health) =>
          HttpServerResponse.text(renderHomePage(baseUrl, references ??= referencePages(), health), { contentType: "text/html; charset=utf-8" })
        )
      )
    )
  }))
