/**
 * The guided flow for a draft (#29 "Views" 5): audience → content → sender → test-send and send.
 * Each "Next" saves the draft (created at the first, then updated), so a draft is never only in
 * the page; edits not yet saved warn before leaving. The API's refusal shows beside the step.
 */
import { useState } from "preact/hooks"
import { type Campaign, campaignsApi, testSend } from "../../../api/bulk-campaigns.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { useLeaveGuard } from "../../../components/use-leave-guard.ts"
import { navigate } from "../../../router.ts"
import { draftOf, EMPTY_FORM, type FlowForm, formOf, missingAt } from "./draft.ts"
import { AudienceStep, ContentStep, SenderStep } from "./flow-steps.tsx"
import { SendStep } from "./SendStep.tsx"

const STEPS = ["Audience", "Content", "Sender", "Test and send"] as const

/** The step a just-created draft continues at once the page moves to its own address. */
const continueAt = new Map<string, number>()

export const CampaignFlow = ({ campaign, onChanged }: { campaign: Campaign | undefined; onChanged: () => void }) => {
  const [form, setForm] = useState<FlowForm>(campaign === undefined ? EMPTY_FORM : formOf(campaign))
  const [step, setStep] = useState(campaign === undefined ? 0 : continueAt.get(campaign.id) ?? 0)
  const [dirty, setDirty] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  useLeaveGuard(dirty)

  const set = (patch: Partial<FlowForm>) => {
    setForm((before) => ({ ...before, ...patch }))
    setDirty(true)
  }

  /** Saves the draft; a new one gets its own address (campaigns/{id}) so a reload keeps it. */
  const save = async (nextStep: number = step): Promise<Campaign> => {
    const draft = draftOf(form)
    const saved = campaign === undefined ? await campaignsApi.create(draft) : await campaignsApi.update(campaign.id, draft)
    setDirty(false)
    if (campaign === undefined) {
      continueAt.set(saved.id, nextStep)
      navigate(`campaigns/${saved.id}`)
    }
    return saved
  }

  const run = async (work: () => Promise<void>) => {
    setBusy(true)
    setError(undefined)
    try {
      await work()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }

  const goTo = (target: number) => void run(async () => {
    for (let at = 0; at < target; at += 1) {
      const missing = missingAt(at, form)
      if (missing !== undefined) {
        setStep(at)
        throw new Error(missing)
      }
    }
    if (dirty || campaign === undefined) await save(target)
    setStep(target)
  })

  const send = async (scheduledAt: string | undefined) => {
    const saved = await save()
    await campaignsApi.send(saved.id, scheduledAt)
    onChanged()
  }

  return (
    <div class="cp-flow">
      <ol class="cp-steps" aria-label="Steps">
        {STEPS.map((title, index) => (
          <li key={title}>
            <button type="button" class={index === step ? undefined : "secondary"} aria-current={index === step ? "step" : undefined}
              disabled={busy} onClick={() => goTo(index)}>
              {index + 1}. {title}
            </button>
          </li>
        ))}
      </ol>
      <section aria-labelledby="flow-step-heading">
        <h2 id="flow-step-heading">{STEPS[step]}</h2>
        {step === 0 ? <AudienceStep form={form} set={set} /> : null}
        {step === 1 ? <ContentStep form={form} set={set} /> : null}
        {step === 2 ? <SenderStep form={form} set={set} /> : null}
        {step === 3 ? <SendStep form={form} onSend={send} onTest={async (to) => testSend((await save()).id, to)} /> : null}
        <ErrorMessage error={error} id="flow-error" />
        <div class="op-actions">
          {step > 0 ? <button type="button" class="secondary" disabled={busy} onClick={() => setStep(step - 1)}>Back</button> : null}
          {step < STEPS.length - 1 ? <button type="button" disabled={busy} onClick={() => goTo(step + 1)}>Save and continue</button> : null}
          <button type="button" class="secondary" disabled={busy || missingAt(0, form) !== undefined} onClick={() => void run(async () => {
            await save()
          })}>Save draft</button>
          {dirty ? <span class="cp-hint" role="status">Unsaved changes</span> : null}
        </div>
      </section>
    </div>
  )
}
