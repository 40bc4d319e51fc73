// The real Prompter: @clack/prompts on the terminal. Its cancel symbol (Ctrl-C, Esc) becomes CANCEL.
import * as clack from "@clack/prompts"
import { CANCEL, type Option, type Prompter } from "./wizard"

const options = <T extends string>(list: Option<T>[]) =>
  list.map((o) => ({ value: o.value, label: o.label, hint: o.hint }))

export const clackPrompter: Prompter = {
  async select(question) {
    const value = await clack.select({
      message: question.message,
      options: options(question.options) as never,
      initialValue: question.initialValue,
    })
    return clack.isCancel(value) ? CANCEL : (value as typeof question.initialValue & string)
  },
  async multiselect(question) {
    const value = await clack.multiselect({
      message: question.message,
      options: options(question.options) as never,
      initialValues: question.initialValues,
      required: false,
    })
    return clack.isCancel(value) ? CANCEL : (value as NonNullable<typeof question.initialValues>)
  },
  async text(question) {
    const value = await clack.text({
      message: question.message,
      initialValue: question.initialValue,
      validate: question.validate && ((v) => question.validate!(v ?? "")),
    })
    return clack.isCancel(value) ? CANCEL : value
  },
  async confirm(question) {
    const value = await clack.confirm({ message: question.message, initialValue: question.initialValue })
    return clack.isCancel(value) ? CANCEL : value
  },
  note(message) {
    clack.note(message)
  },
}
