// Staff mode, as the first opening loads it (lib/staffDoor.svelte.ts): a
// chunk of its own, outside the customer bundle.

export { Staff } from "../lib/staff.svelte";
export { defaultStaffApi } from "../lib/staffBridge";
export { default as StaffRoot } from "./StaffRoot.svelte";
