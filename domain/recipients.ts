/** Recipients are plain addresses or E.164 numbers: nothing that could carry a second header or recipient. */
const EMAIL_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const E164 = /^\+[1-9][0-9]{6,14}$/;

export const isEmailAddress = (value: string) => value.length <= 254 && EMAIL_ADDRESS.test(value);
export const isPhoneNumber = (value: string) => E164.test(value);
