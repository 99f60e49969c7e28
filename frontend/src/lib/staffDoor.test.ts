import { describe, expect, it, vi } from "vitest";
import StaffRoot from "../staff/StaffRoot.svelte";
import { fakeStaff } from "../test/staffFakes";
import { Staff } from "./staff.svelte";
import { defaultStaffApi } from "./staffBridge";
import { StaffDoor, type StaffMode } from "./staffDoor.svelte";

const mode: StaffMode = { Staff, StaffRoot, defaultStaffApi };

describe("StaffDoor", () => {
  it("loads staff mode at the first opening only, then opens the PIN pad in the kiosk's language", async () => {
    const staff = fakeStaff();
    const load = vi.fn(async () => mode);
    const door = new StaffDoor({ api: staff.api, load });
    expect(load).not.toHaveBeenCalled();
    expect(door.closed).toBe(true);
    expect(door.active).toBe(false);

    await door.open("es", "EUR", "shortcut");
    expect(load).toHaveBeenCalledTimes(1);
    expect(door.root).toBe(StaffRoot);
    expect(door.staff?.view).toBe("pad");
    expect(door.staff?.language).toBe("es");
    expect(door.staff?.gesture).toBe("shortcut");
    expect(door.active).toBe(true);
    expect(door.closed).toBe(false);
    expect(staff.names()).toEqual(["Gate"]);

    const first = door.staff;
    door.staff?.cancelPad();
    expect(door.closed).toBe(true);
    await door.open("fr", "EUR", "corner");
    expect(load).toHaveBeenCalledTimes(1);
    expect(door.staff).toBe(first);
    expect(door.staff?.language).toBe("fr");
  });

  it("loads once when staff tap again while it loads", async () => {
    const staff = fakeStaff();
    let loaded: (m: StaffMode) => void = () => {};
    const load = vi.fn(() => new Promise<StaffMode>((resolve) => (loaded = resolve)));
    const door = new StaffDoor({ api: staff.api, load });
    const a = door.open("en", "EUR", "corner");
    const b = door.open("en", "EUR", "corner");
    loaded(mode);
    await Promise.all([a, b]);
    expect(load).toHaveBeenCalledTimes(1);
    expect(staff.names()).toEqual(["Gate"]);
  });

  it("says a failed load, stays closed, and loads again at the next opening", async () => {
    const staff = fakeStaff();
    const load = vi.fn().mockRejectedValueOnce(new TypeError("Failed to fetch dynamically imported module")).mockResolvedValue(mode);
    const failed = vi.fn();
    const door = new StaffDoor({ api: staff.api, load, onLoadFailed: failed });
    await door.open("en", "EUR", "corner");
    expect(failed).toHaveBeenCalledTimes(1);
    expect(door.closed).toBe(true);
    expect(door.staff).toBeNull();
    expect(staff.names()).toEqual([]);

    await door.open("en", "EUR", "corner");
    expect(load).toHaveBeenCalledTimes(2);
    expect(failed).toHaveBeenCalledTimes(1);
    expect(door.staff?.view).toBe("pad");
  });
});
