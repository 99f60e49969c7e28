/**
 * secondsLeft counts down to a deadline the backend sends (an ISO time),
 * ticking four times a second while the component that calls it is
 * mounted. `deadline` is the time in ms since the epoch (NaN while there is
 * none) and `seconds` what is left, rounded up, never below 0 (null while
 * there is no deadline). Call it while a component initialises.
 */
export function secondsLeft(source: () => string | undefined | null): { readonly deadline: number; readonly seconds: number | null } {
  let now = $state(Date.now());
  $effect(() => {
    const timer = setInterval(() => (now = Date.now()), 250);
    return () => clearInterval(timer);
  });
  const deadline = $derived.by(() => {
    const d = source();
    return d ? Date.parse(d) : NaN;
  });
  const seconds = $derived(Number.isFinite(deadline) ? Math.max(0, Math.ceil((deadline - now) / 1000)) : null);
  return {
    get deadline() {
      return deadline;
    },
    get seconds() {
      return seconds;
    },
  };
}
