// What the console's forms are made of: labelled fields (a text input, a code, a select), the submit button that
// is off while its action runs, and the submit handler that keeps the page where it is.
import type { ComponentChildren, InputHTMLAttributes } from "preact";
import { useState } from "preact/hooks";

/** A control under its label: the label names it for screen readers and for the browser tests alike. */
function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
    </label>
  );
}

/** The attributes the console's inputs set besides their value (only those a caller names reach the input). */
interface InputAttributes {
  name: string;
  type?: "email" | "password" | "search" | "color";
  autoComplete?: InputHTMLAttributes["autoComplete"];
  inputMode?: "numeric";
  required?: boolean;
  pattern?: string;
  maxLength?: number;
}

interface ValueProps<Value> {
  value: Value;
  /** Called with each change the user makes. */
  set: (value: Value) => void;
}

/** A field's state, spread into its TextField or SelectField: its value, and `set` to change it. */
export function useField(initial: string): ValueProps<string> {
  const [value, set] = useState(initial);
  return { value, set };
}

/** A labelled input whose value is the caller's state. */
export function TextField({ label, value, set, ...input }: InputAttributes & ValueProps<string> & { label: string }) {
  return (
    <Field label={label}>
      {/* The cast: preact types an input's attributes by each `type` apart, and these hold for every type named. */}
      <input {...(input as InputHTMLAttributes)} value={value} onInput={(event) => set(event.currentTarget.value)} />
    </Field>
  );
}

/** A code from an authenticator app: digits the phone's keyboard offers, and the browser may fill in. */
export function CodeField(props: Pick<InputAttributes, "name" | "pattern"> & ValueProps<string> & { label: string }) {
  return <TextField {...props} inputMode="numeric" autoComplete="one-time-code" required />;
}

/** A labelled select of `options`, each its value and the words shown for it. */
export function SelectField<Value extends string>({
  label,
  name,
  value,
  set,
  options,
}: { label: string; name: string; options: ReadonlyArray<readonly [Value, string]> } & ValueProps<Value>) {
  return (
    <Field label={label}>
      {/* The cast holds: the select offers only the options' values. */}
      <select name={name} value={value} onChange={(event) => set(event.currentTarget.value as Value)}>
        {options.map(([option, words]) => (
          <option key={option} value={option}>
            {words}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** A filter's options: "any" (no filter, the empty value), then each value, shown as itself. */
export const anyOr = (values: readonly string[]): Array<[string, string]> => [
  ["", "any"],
  ...values.map((value): [string, string] => [value, value]),
];

/** A form's submit button, off while the form's action runs, so that one press sends it once. */
export function Submit(button: { busy: boolean; class?: string; children: ComponentChildren }) {
  const { busy, ...rest } = button;
  return <button type="submit" disabled={busy} {...rest} />;
}

/** A form's submit handler: the browser does not send the form itself (the page would leave), `then` runs. */
export const submitted = (then: () => unknown) => (event: Event) => {
  event.preventDefault();
  void then();
};
