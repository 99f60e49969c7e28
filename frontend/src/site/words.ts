// The words of the kitchen screens and the board, in the three languages
// of the kiosk. Typed by the French set: a missing word does not compile.

const fr = {
  "kitchen.title": "Cuisine",
  "kitchen.expo": "Passe (tout)",
  "kitchen.station": "Poste",
  "kitchen.ready": "Prêt",
  "kitchen.recall": "Rappeler",
  "kitchen.collected": "Remis",
  "kitchen.recent": "Derniers envoyés",
  "kitchen.allday": "À faire",
  "kitchen.empty": "Aucune commande à préparer",
  "kitchen.offline": "Connexion au site perdue : l’écran peut être en retard",
  "kitchen.eat_in": "Sur place",
  "kitchen.take_away": "À emporter",
  "kitchen.cancelled": "ANNULÉE",
  "kitchen.refunded": "REMBOURSÉE",
  "kitchen.keys": "Touches : 1–9 prêt, ←/→ choisir, Entrée prêt, R rappeler",
  "board.preparing": "En préparation",
  "board.ready": "Prêt",
  "board.title": "Vos commandes",
  "board.offline": "Connexion perdue",
};

type Words = typeof fr;

const en: Words = {
  "kitchen.title": "Kitchen",
  "kitchen.expo": "Expeditor (all)",
  "kitchen.station": "Station",
  "kitchen.ready": "Ready",
  "kitchen.recall": "Recall",
  "kitchen.collected": "Collected",
  "kitchen.recent": "Last bumped",
  "kitchen.allday": "All day",
  "kitchen.empty": "No order to prepare",
  "kitchen.offline": "Site connection lost: this screen may be behind",
  "kitchen.eat_in": "Eat in",
  "kitchen.take_away": "Take away",
  "kitchen.cancelled": "CANCELLED",
  "kitchen.refunded": "REFUNDED",
  "kitchen.keys": "Keys: 1–9 ready, ←/→ select, Enter ready, R recall",
  "board.preparing": "Preparing",
  "board.ready": "Ready",
  "board.title": "Your orders",
  "board.offline": "Connection lost",
};

const es: Words = {
  "kitchen.title": "Cocina",
  "kitchen.expo": "Pase (todo)",
  "kitchen.station": "Puesto",
  "kitchen.ready": "Listo",
  "kitchen.recall": "Recuperar",
  "kitchen.collected": "Entregado",
  "kitchen.recent": "Últimos enviados",
  "kitchen.allday": "Por hacer",
  "kitchen.empty": "Ningún pedido que preparar",
  "kitchen.offline": "Conexión con el sitio perdida: la pantalla puede ir con retraso",
  "kitchen.eat_in": "Para tomar aquí",
  "kitchen.take_away": "Para llevar",
  "kitchen.cancelled": "ANULADO",
  "kitchen.refunded": "REEMBOLSADO",
  "kitchen.keys": "Teclas: 1–9 listo, ←/→ elegir, Intro listo, R recuperar",
  "board.preparing": "En preparación",
  "board.ready": "Listo",
  "board.title": "Sus pedidos",
  "board.offline": "Conexión perdida",
};

export const siteLanguages = ["fr", "en", "es"] as const;
export type SiteLang = (typeof siteLanguages)[number];
const all: Record<SiteLang, Words> = { fr, en, es };

export function langOf(v: string | null): SiteLang {
  return (siteLanguages as readonly string[]).includes(v ?? "") ? (v as SiteLang) : "fr";
}

export function words(lang: SiteLang): Words {
  return all[lang];
}

export function nameIn(name: Record<string, string>, lang: SiteLang): string {
  return name[lang] || name.fr || Object.values(name)[0] || "";
}
