/** A labelled input: every control in the console has a visible label tied to it. */

export interface FieldProps {
  readonly id: string
  readonly label: string
  readonly value: string
  readonly onValue: (value: string) => void
  readonly type?: "text" | "email" | "password" | "search" | "url" | "number" | "date" | "datetime-local"
  readonly autoComplete?: string
  readonly required?: boolean
  readonly maxLength?: number
  /** An error about this field: shown under it and announced with it. */
  readonly error?: string | undefined
}

export const Field = ({ autoComplete, error, id, label, maxLength, onValue, required, type, value }: FieldProps) => (
  <div class="field">
    <label for={id}>{label}</label>
    <input
      id={id}
      // Preact types <input> as a union discriminated by `type`; a variable type is one of ours.
      type={(type ?? "text") as "text"}
      value={value}
      autoComplete={autoComplete}
      required={required}
      maxLength={maxLength}
      onInput={(event) => onValue(event.currentTarget.value)}
      aria-invalid={error === undefined ? undefined : true}
      aria-describedby={error === undefined ? undefined : `${id}-error`}
    />
    {error === undefined ? null : <p class="error" id={`${id}-error`}>{error}</p>}
  </div>
)
