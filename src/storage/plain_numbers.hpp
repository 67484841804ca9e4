// Fast paths of the text parser (text_entries.cpp) for the numbers entry lines almost always
// hold: integers of one to three digits (FROSTT coordinates, mostly), and reals in plain
// decimal form with at most 19 digits before the exponent. Neither checks for the end of the
// text: the caller makes sure kPlainNumberSlack bytes are readable where they start. Each
// returns null for anything else (a malformed token included), and the caller then reads the
// token the general way (parseInteger, fast_float): an explicit fallback, so that every
// token gives the value it gave before, bit for bit.
//
// Both advance through the digits with loops the branch predictor runs ahead of, rather than
// with a word's digit count computed first: measured on 2 M-line files (one thread, CPU time),
// a line's next field then starts sooner, and a coordinate of one to three digits parses
// faster that way than 8 bytes at a time (longer ones are faster 8 bytes at a time).
#pragma once
#include <cstdint>
#include <cstring>

#include "fast_float/fast_float.h"

namespace coiter {

// Bytes a fast path may read from where it starts: a sign, 20 digits, a point, 20 more, an
// exponent's marker, sign and 5 digits, with room to spare.
constexpr int kPlainNumberSlack = 64;

inline bool isDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// [+-]? then one to three digits, not followed by a fourth: the value as parseInteger gives
// it (a signed field takes any sign, an unsigned one "-0" but no other negative number).
[[gnu::always_inline]] inline const char* parseShortInteger(const char* s, bool isSigned, uint64_t& out) {
  const bool negative = *s == '-';
  s += negative || *s == '+';
  if (isDigit(s[3])) return nullptr;  // longer: parseInteger reads 8 digits at a time
  const char* q = s;
  uint64_t magnitude = 0;
  while (isDigit(*q)) magnitude = 10 * magnitude + static_cast<uint64_t>(*q++ - '0');
  if (q == s || (negative && !isSigned && magnitude != 0)) return nullptr;
  out = negative ? 0 - magnitude : magnitude;  // a negative int64's bits
  return q;
}

// [+-]?(digits(.digits?)?|.digits)([eE][+-]?digits)? with at most 19 digits before the
// exponent and at most 4 in it: the double fast_float gives for it, when `nearest` (the
// thread rounds to nearest, as fast_float's Clinger path asks). The digits are the mantissa
// w and the exponent less the fraction's digits is q, which is what fast_float's
// parse_number_string gives for such text, and the value is computed from them as fast_float
// computes it: Clinger's fast path when w <= 2^53 and |q| <= 22 (w and 10^|q| are exact
// doubles, so one correctly rounded multiply or divide is the correctly rounded value),
// otherwise fast_float's Eisel-Lemire step (compute_float). Only when that step cannot decide
// (am.power2 < 0: values close to halfway between two doubles) does fast_float need the
// digits themselves: null then, as for more digits, inf, nan or a malformed token.
[[gnu::always_inline]] inline const char* parsePlainDecimal(const char* s, bool nearest, uint64_t& out) {
  using Format = fast_float::binary_format<double>;
  if (!nearest) return nullptr;
  const bool negative = *s == '-';
  s += negative || *s == '+';
  // Runs of 20 digits are read (and then refused), never more: the slack holds them.
  const char* q = s;
  uint64_t mantissa = 0;  // wraps when more than 19 digits are read, which are then refused
  while (q < s + 20 && isDigit(*q)) mantissa = 10 * mantissa + static_cast<uint64_t>(*q++ - '0');
  const int integerDigits = static_cast<int>(q - s);
  int fractionDigits = 0;
  if (*q == '.') {
    const char* fraction = ++q;
    const char* limit = fraction + (20 - integerDigits);
    while (q + 8 <= limit && fast_float::is_made_of_eight_digits_fast(q)) {
      mantissa = mantissa * 100000000 + fast_float::parse_eight_digits_unrolled(q);
      q += 8;
    }
    while (q < limit && isDigit(*q)) mantissa = 10 * mantissa + static_cast<uint64_t>(*q++ - '0');
    fractionDigits = static_cast<int>(q - fraction);
  }
  const int digits = integerDigits + fractionDigits;
  if (digits == 0 || digits > 19) return nullptr;
  int64_t exponent = -fractionDigits;
  if ((*q | 0x20) == 'e') {
    ++q;
    const bool negativeExponent = *q == '-';
    q += negativeExponent || *q == '+';
    const char* exponentDigits = q;
    int64_t explicitExponent = 0;
    while (q < exponentDigits + 5 && isDigit(*q)) explicitExponent = 10 * explicitExponent + (*q++ - '0');
    if (q == exponentDigits || q - exponentDigits > 4) return nullptr;
    exponent += negativeExponent ? -explicitExponent : explicitExponent;
  }
  double value;
  if (Format::min_exponent_fast_path() <= exponent && exponent <= Format::max_exponent_fast_path() &&
      mantissa <= Format::max_mantissa_fast_path()) {
    value = static_cast<double>(mantissa);
    if (exponent < 0)
      value = value / Format::exact_power_of_ten(-exponent);
    else
      value = value * Format::exact_power_of_ten(exponent);
    if (negative) value = -value;
  } else {
    const fast_float::adjusted_mantissa am = fast_float::compute_float<Format>(exponent, mantissa);
    if (am.power2 < 0) return nullptr;
    fast_float::to_float(negative, am, value);
  }
  std::memcpy(&out, &value, sizeof value);
  return q;
}

}  // namespace coiter
