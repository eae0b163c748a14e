/**
 * The campaign flow's form: what the person chose at each step, and its translation to and from
 * the API's draft (list_ids/segment_id, template_id or own content, from_email split into a local
 * part and one of the account's verified domains).
 */
import type { Campaign, CampaignDraft } from "../../../api/bulk-campaigns.ts"

export interface FlowForm {
  readonly name: string
  readonly audience: "list" | "segment"
  readonly listId: string | null
  readonly segmentId: string | null
  readonly content: "template" | "own"
  readonly templateId: string | null
  readonly subject: string
  readonly html: string
  readonly text: string
  readonly fromLocal: string
  readonly fromDomain: string
  readonly fromName: string
}

export const EMPTY_FORM: FlowForm = {
  name: "",
  audience: "list",
  listId: null,
  segmentId: null,
  content: "own",
  templateId: null,
  subject: "",
  html: "",
  text: "",
  fromLocal: "hello",
  fromDomain: "",
  fromName: ""
}

const orNull = (value: string): string | null => (value.trim() === "" ? null : value)

export const fromAddress = (form: FlowForm): string | null =>
  form.fromLocal.trim() === "" || form.fromDomain === "" ? null : `${form.fromLocal.trim()}@${form.fromDomain}`

export const draftOf = (form: FlowForm): CampaignDraft => {
  const own = form.content === "own"
  return {
    name: form.name.trim(),
    template_id: own ? null : form.templateId,
    subject: own ? orNull(form.subject) : null,
    html: own ? orNull(form.html) : null,
    body_text: own ? orNull(form.text) : null,
    from_email: fromAddress(form),
    from_name: orNull(form.fromName),
    list_ids: form.audience === "list" && form.listId !== null ? [form.listId] : [],
    segment_id: form.audience === "segment" ? form.segmentId : null
  }
}

export const formOf = (campaign: Campaign): FlowForm => {
  const [local = "", domain = ""] = (campaign.from_email ?? "").split("@")
  return {
    name: campaign.name,
    audience: campaign.list_ids.length === 0 && campaign.segment_id !== null ? "segment" : "list",
    listId: campaign.list_ids[0] ?? null,
    segmentId: campaign.segment_id,
    content: campaign.template_id === null ? "own" : "template",
    templateId: campaign.template_id,
    subject: campaign.subject ?? "",
    html: campaign.html ?? "",
    text: campaign.body_text ?? "",
    fromLocal: campaign.from_email === null ? EMPTY_FORM.fromLocal : local,
    fromDomain: domain,
    fromName: campaign.from_name ?? ""
  }
}

/** What each step still needs before the next one, or undefined when it is complete. */
export const missingAt = (step: number, form: FlowForm): string | undefined => {
  if (step === 0) {
    if (form.name.trim() === "") return "Give the campaign a name."
    if (form.audience === "list" && form.listId === null) return "Choose the list to send to."
    if (form.audience === "segment" && form.segmentId === null) return "Choose the segment to send to."
  }
  if (step === 1) {
    if (form.content === "template" && form.templateId === null) return "Choose a template."
    if (form.content === "own" && form.subject.trim() === "") return "Write a subject."
    if (form.content === "own" && form.html.trim() === "" && form.text.trim() === "") return "Write the message: HTML, text or both."
  }
  if (step === 2 && fromAddress(form) === null) return "Choose the sender: a verified domain and the address's name part."
  return undefined
}
