// JSON writing for the tick batch. Pure functions: no game state, so their output can be
// compared with the other reference clients' on the same fixtures.
class BrainstemJson
{
	static const string HEX = "0123456789abcdef";
	// Numbers are written with three decimals at most (millimetres for positions); larger
	// magnitudes are clamped so an int never overflows.
	static const float MAX_NUMBER = 2000000000;

	// A JSON string literal: quotes, backslashes and control characters escaped; every other
	// byte (UTF-8 included) is copied as it is.
	static string Quote(string s)
	{
		string result = "\"";
		int n = s.Length();
		int start = 0;
		for (int i = 0; i < n; i++)
		{
			string c = s.Get(i);
			int code = c.ToAscii();
			string esc = "";
			if (c == "\"")
				esc = "\\\"";
			else if (c == "\\")
				esc = "\\\\";
			else if (code == 10)
				esc = "\\n";
			else if (code == 13)
				esc = "\\r";
			else if (code == 9)
				esc = "\\t";
			else if (code >= 0 && code < 32)
				esc = "\\u00" + HEX.Get(code / 16) + HEX.Get(code % 16);
			if (esc != "")
			{
				result += s.Substring(start, i - start) + esc;
				start = i + 1;
			}
		}
		return result + s.Substring(start, n - start) + "\"";
	}

	// A JSON number with at most three decimals, written digit by digit so the text does not
	// depend on float.ToString's formatting.
	static string Num(float f)
	{
		string sign = "";
		if (f < 0)
		{
			sign = "-";
			f = -f;
		}
		if (f > MAX_NUMBER)
			f = MAX_NUMBER;
		int whole = Math.Floor(f);
		int milli = Math.Round((f - whole) * 1000);
		if (milli >= 1000)
		{
			whole = whole + 1;
			milli = milli - 1000;
		}
		if (milli == 0)
		{
			if (whole == 0)
				return "0";
			return sign + whole.ToString();
		}
		string frac = milli.ToString();
		while (frac.Length() < 3)
			frac = "0" + frac;
		while (frac.Substring(frac.Length() - 1, 1) == "0")
			frac = frac.Substring(0, frac.Length() - 1);
		return sign + whole.ToString() + "." + frac;
	}

	static string Int(int i)
	{
		return i.ToString();
	}

	static string Bool(bool b)
	{
		if (b)
			return "true";
		return "false";
	}

	// DayZ's vector is [x, height, z]: the sidecar's {x, y, z} with y up, as is.
	static string Vec(vector v)
	{
		return "{\"x\":" + Num(v[0]) + ",\"y\":" + Num(v[1]) + ",\"z\":" + Num(v[2]) + "}";
	}

	// Unreserved characters as they are, every other byte as %XX (for the token in the query).
	static string UrlEncode(string s)
	{
		string result = "";
		for (int i = 0; i < s.Length(); i++)
		{
			string c = s.Get(i);
			int code = c.ToAscii();
			if (code < 0)
				code = code + 256;
			bool plain = (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || c == "-" || c == "_" || c == "." || c == "~";
			if (plain)
				result += c;
			else
				result += "%" + HEX.Get(code / 16) + HEX.Get(code % 16);
		}
		return result;
	}
}
