import type { Phase } from "./contract";

/**
 * The phases an idle kiosk may abandon: never while a payment is out
 * (paying, canceling), nor when staff must see the screen (unknown,
 * unavailable), nor on the welcome screen, which has nothing to abandon.
 */
export const abandonable: ReadonlySet<Phase> = new Set<Phase>(["ordering", "declined", "failed", "approved"]);

/** warningSeconds is how long "Are you still there?" shows before abandoning. */
export function warningSeconds(idleSeconds: number): number {
  return Math.max(0, Math.min(15, Math.floor(idleSeconds / 3)));
}
