/**
 * Every public page of the bulk area, on the appliance's one HTTP server (DESIGN "Public pages and
 * tokens"; no API key): `/confirm/<token>` (double opt-in), `/u/<token>` (unsubscribe, RFC 8058
 * one-click), `/o/<token>` and `/c/<token>` (campaign tracking).
 */
import { Layer } from "effect"
import { TrackingRoutesLive } from "../tracking/routes.ts"
import { ConfirmPageLive } from "./confirm-page.ts"
import { UnsubscribePageLive } from "./unsubscribe-page.ts"

export const PublicPagesLive = Layer.mergeAll(ConfirmPageLive, UnsubscribePageLive, TrackingRoutesLive)
