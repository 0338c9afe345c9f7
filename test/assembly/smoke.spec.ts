import { filter_version } from "../../assembly/embed/exports";
describe("smoke", () => {
  it("has a version", () => { expect(filter_version()).toBe("0.1.0"); });
});
