// The menu the component tests render: data only, in the shape the backend
// sends (CatalogView).

import type { CatalogView, ProductView } from "../lib/contract";

const p = (
  id: string,
  fr: string,
  en: string,
  es: string,
  price: number,
  vatRate: number,
  mealVoucher = true,
  description?: [string, string, string],
  allergens?: string[],
): ProductView => ({
  id,
  name: { fr, en, es },
  description: description && { fr: description[0], en: description[1], es: description[2] },
  price,
  vatRate,
  mealVoucher,
  allergens,
});

export const testCatalog: CatalogView = {
  currency: "EUR",
  categories: [
    {
      id: "mains",
      name: { fr: "Plats", en: "Mains", es: "Platos" },
      products: [
        p("croque", "Croque-monsieur", "Croque-monsieur", "Croque-monsieur", 750, 1000, true,
          ["Jambon, comté, béchamel", "Ham, comté cheese, béchamel", "Jamón, queso comté, bechamel"], ["gluten", "milk"]),
        p("quiche", "Quiche lorraine", "Quiche lorraine", "Quiche lorraine", 850, 1000, true,
          ["Lardons, crème, œufs", "Bacon, cream, eggs", "Beicon, nata, huevos"], ["gluten", "milk", "eggs"]),
        p("salade", "Salade niçoise", "Niçoise salad", "Ensalada nizarda", 1150, 1000, true,
          ["Thon, œuf, olives, haricots verts", "Tuna, egg, olives, green beans", "Atún, huevo, aceitunas, judías verdes"], ["fish", "eggs"]),
        p("soupe", "Soupe du jour", "Soup of the day", "Sopa del día", 600, 1000),
        p("sandwich", "Jambon-beurre", "Ham and butter baguette", "Bocadillo de jamón", 550, 1000, true, undefined, ["gluten", "milk"]),
        p("tarte", "Tarte aux légumes", "Vegetable tart", "Tarta de verduras", 900, 1000),
      ],
    },
    {
      id: "drinks",
      name: { fr: "Boissons", en: "Drinks", es: "Bebidas" },
      products: [
        p("eau", "Eau minérale 50 cl", "Still water 50 cl", "Agua mineral 50 cl", 200, 550),
        p("cafe", "Café", "Espresso", "Café solo", 180, 1000),
        p("the", "Thé", "Tea", "Té", 250, 1000),
        p("jus", "Jus d'orange pressé", "Fresh orange juice", "Zumo de naranja natural", 400, 550),
        p("biere", "Bière pression", "Draught beer", "Cerveza de barril", 550, 2000, false),
      ],
    },
    {
      id: "desserts",
      name: { fr: "Desserts", en: "Desserts", es: "Postres" },
      products: [
        p("tarte-citron", "Tarte au citron", "Lemon tart", "Tarta de limón", 450, 1000, true, undefined, ["gluten", "eggs", "milk"]),
        p("mousse", "Mousse au chocolat", "Chocolate mousse", "Mousse de chocolate", 400, 1000, true, undefined, ["eggs", "milk"]),
        p("fruit", "Salade de fruits", "Fruit salad", "Macedonia", 350, 550),
      ],
    },
  ],
};

