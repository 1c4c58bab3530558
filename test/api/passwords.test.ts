import { describe, expect, test } from "bun:test";
import { dictionary } from "@zxcvbn-ts/language-common";
import { expectProblem, testApp } from "../helpers.ts";

const CREATE = "/svc-api/v1/users/create";

describe("password rules (NIST SP 800-63B)", () => {
  test("the bundled list of common passwords holds more than 10,000 entries", () => {
    expect(dictionary["passwords-common"].length).toBeGreaterThan(10_000);
  });

  test.each([["password123"], ["qwertyuiop"], ["iloveyou1"], ["Password1"], ["PASSWORD123"], ["11111111"]])(
    "refuses the common password %p at sign-up, without regard to case",
    async (password) => {
      const { call, store } = await testApp();
      const reply = await call("POST", CREATE, { body: { username: "ann", email: "ann@example.com", password } });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors).toEqual([{ field: "password", message: expect.stringContaining("common") }]);
      expect(await store.users.findByLogin("ann")).toBeNull();
    },
  );

  test("refuses a common password as the new password", async () => {
    const { call, signUp } = await testApp();
    const { token, password } = await signUp();
    const reply = await call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: password, new_password: "letmein123" },
    });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors[0].field).toBe("new_password");
  });

  test("sets no composition rules: lower-case words, spaces, any script are fine", async () => {
    const { call } = await testApp();
    for (const [i, password] of [
      "correct horse battery",
      "пароль без цифр",
      "パスワードは長いです",
      "zzzzzzzzzzzzzzzz x",
    ].entries()) {
      const reply = await call("POST", CREATE, {
        body: { username: `user${i}`, email: `u${i}@example.com`, password },
      });
      expect(reply.status).toBe(201);
    }
  });

  test("normalises Unicode, so one password typed two ways logs in", async () => {
    const { call } = await testApp();
    const composed = "café au lait!"; // é as one code point
    const decomposed = "cafe\u0301 au lait!"; // e + combining accent
    expect(
      (await call("POST", CREATE, { body: { username: "ann", email: "a@b.co", password: composed } })).status,
    ).toBe(201);
    expect(
      (await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: decomposed } })).status,
    ).toBe(200);
  });
});
