/**
 * The API's own message, shown next to what caused it. `id` lets the control it concerns point at
 * it with aria-describedby; role="alert" makes a screen reader announce it when it appears.
 */
import { ApiError } from "../api/client.ts"

export const messageOf = (error: unknown): string =>
  error instanceof ApiError ? error.message : error instanceof Error ? error.message : "Something went wrong."

export const ErrorMessage = ({ error, id }: { error: unknown; id?: string }) =>
  error === undefined || error === null ? null : <p class="error" role="alert" id={id}>{messageOf(error)}</p>
