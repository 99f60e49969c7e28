// The kitchen's API (backend/kitchen): the views the kitchen screens and
// the board show, and the bumps. A GET with ?since=VERSION waits on the
// server until the view changes, so a screen follows without polling.

export type Line = {
  index: number;
  product: string;
  name: Record<string, string>;
  qty: number;
  choices?: string[];
  category?: string;
  ready: boolean;
};

export type Ticket = {
  key: string;
  orderId: string;
  number: string;
  kiosk: string;
  dining?: string;
  notes?: string;
  paidAt: string;
  lines: Line[];
  readyAt?: string;
  collectedAt?: string;
  void?: string;
  seq: number;
};

export type OrdersView = {
  station: string;
  stations: string[] | null;
  version: number;
  now: number;
  orders: Ticket[];
  recent: Ticket[];
  allDay: { product: string; name: Record<string, string>; qty: number }[];
  warnAfter: number;
  lateAfter: number;
  online: boolean;
};

export type BoardView = {
  version: number;
  preparing: string[];
  ready: string[];
  chime: boolean;
  online: boolean;
};

export type Bump = { key: string; line: number; action: "ready" | "recall" | "collect"; station: string };

async function answer<T>(res: Response): Promise<T> {
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body as { error?: string }).error ?? `HTTP ${res.status}`);
  return body as T;
}

export async function ordersView(station: string, since: number | null, signal?: AbortSignal): Promise<OrdersView> {
  const q = new URLSearchParams({ station });
  if (since !== null) q.set("since", String(since));
  return answer(await fetch(`/api/kitchen/orders?${q}`, { signal, cache: "no-store" }));
}

export async function boardView(since: number | null, signal?: AbortSignal): Promise<BoardView> {
  const q = since !== null ? `?since=${since}` : "";
  return answer(await fetch(`/api/board${q}`, { signal, cache: "no-store" }));
}

export async function bump(b: Bump): Promise<OrdersView> {
  return answer(
    await fetch("/api/kitchen/bump", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(b),
    }),
  );
}

// follow calls load with the last version it saw until stop is called:
// each answer comes when the view changed; an error waits a second.
export function follow<T extends { version: number }>(
  load: (since: number | null, signal: AbortSignal) => Promise<T>,
  show: (v: T) => void,
  onError: (e: unknown) => void = () => {},
): () => void {
  const ctrl = new AbortController();
  let since: number | null = null;
  (async () => {
    while (!ctrl.signal.aborted) {
      try {
        const v = await load(since, ctrl.signal);
        since = v.version;
        show(v);
      } catch (e) {
        if (ctrl.signal.aborted) return;
        onError(e);
        since = null;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();
  return () => ctrl.abort();
}

// ageClass colours a ticket's age by the kitchen's thresholds.
export function ageClass(ageSeconds: number, warnAfter: number, lateAfter: number): "ok" | "warn" | "late" {
  if (ageSeconds >= lateAfter) return "late";
  if (ageSeconds >= warnAfter) return "warn";
  return "ok";
}

export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
