/** Numbers, amounts and times as the console shows them (the browser's locale, the viewer's time zone). */

const numbers = new Intl.NumberFormat()

export const count = (n: number): string => numbers.format(n)

const dateTimes = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })

/** An ISO time from the API as a local date and time; the text itself when it is not a date. */
export const when = (iso: string): string => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : dateTimes.format(date)
}

/** Bytes as B, KB or MB. */
export const bytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`

/** Cents as dollars with two decimals (plans and usage are priced in cents). */
export const cents = (amount: number): string => `$${(amount / 100).toFixed(2)}`
