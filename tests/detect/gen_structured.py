#!/usr/bin/env python3
"""Writes the structured part of the benign corpus (benign/generated_*.txt):
numbers, dates, times, money, postal addresses, e-mail addresses, phone
numbers, user names, product codes, user agents and cookie values, from
templates and word lists written for Bulwark, with a fixed seed so the
files are reproducible. Nothing is filtered: every generated line is kept,
whatever the detectors say about it. Run it again only to regenerate the
same files: python3 tests/detect/gen_structured.py
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
R = random.Random(20240312)

FIRST = ["anna", "ben", "chloe", "david", "emma", "farid", "grace", "hugo", "ines", "jack",
         "kenji", "lena", "mohammed", "nora", "oscar", "priya", "quentin", "rosa", "sean",
         "tariq", "ursula", "victor", "wei", "ximena", "yusuf", "zoe", "aoife", "bjorn",
         "chiara", "dmitri", "elif", "fatima", "giorgos", "hana", "ivan", "jose", "kwame"]
LAST = ["smith", "o'brien", "d'angelo", "garcia", "muller", "nguyen", "kowalski", "rossi",
        "dubois", "tanaka", "kim", "okafor", "silva", "jansen", "novak", "yilmaz", "ivanova",
        "o'neill", "mcdonald", "van-der-berg", "al-hassan", "ng", "lopez", "schmidt", "patel",
        "johansson", "papadopoulos", "cohen", "haddad", "dlamini", "o'connor", "bianchi"]
DOMAINS = ["example.com", "example.org", "example.net", "mail.example.co.uk", "uni.example.edu",
           "example.de", "example.fr", "example.jp", "company.example", "post.example.es"]
STREETS = ["High Street", "Station Road", "Main Street", "Church Lane", "Park Avenue", "Elm Road",
           "King's Road", "Queen's Gate", "St John's Wood Road", "O'Connell Street", "Baker Street",
           "Rue de l'Église", "Rue du Faubourg Saint-Honoré", "Hauptstraße", "Schillerstraße",
           "Calle Mayor", "Avenida de la Constitución", "Via Roma", "Via dell'Indipendenza",
           "Prinsengracht", "Kerkstraat", "ul. Marszałkowska", "Rua Augusta", "Broadway",
           "5th Avenue", "Sunset Boulevard", "Maple Drive", "Oak Court", "Mill Lane", "The Green"]
CITIES = [("London", "NW1 6XE", "UK"), ("Manchester", "M1 1AE", "UK"), ("Dublin", "D02 X285", "Ireland"),
          ("Paris", "75015", "France"), ("Lyon", "69002", "France"), ("Berlin", "10115", "Germany"),
          ("München", "80331", "Germany"), ("Madrid", "28013", "Spain"), ("Roma", "00184", "Italia"),
          ("Amsterdam", "1016 GV", "Netherlands"), ("Warszawa", "00-514", "Poland"),
          ("Lisboa", "1100-053", "Portugal"), ("New York, NY", "10001", "USA"),
          ("Los Angeles, CA", "90028", "USA"), ("Austin, TX", "78701", "USA"),
          ("Toronto, ON", "M5V 2T6", "Canada"), ("Sydney NSW", "2000", "Australia"),
          ("Auckland", "1010", "New Zealand"), ("Cape Town", "8001", "South Africa")]
PRODUCTS = ["TV", "LAPTOP", "SHOE", "SHIRT", "MUG", "LAMP", "DESK", "BIKE", "TENT", "WATCH"]
BROWSERS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v}.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.{m} Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:{v}.0) Gecko/20100101 Firefox/{v}.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_{m} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.{m} Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v}.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v}.0.0.0 Safari/537.36 Edg/{v}.0.0.0",
    "curl/8.{m}.0",
    "Wget/1.21.{m}",
    "python-requests/2.{v}.0",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "okhttp/4.{m}.0",
    "PostmanRuntime/7.{v}.0",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def pick(xs):
    return R.choice(xs)


def name():
    return pick(FIRST), pick(LAST)


def numbers_dates():
    out = []
    for _ in range(25):
        d, m, y = R.randint(1, 28), R.randint(1, 12), R.randint(1950, 2030)
        out += [f"{d:02d}/{m:02d}/{y}", f"{y}-{m:02d}-{d:02d}", f"{m}/{d}/{y % 100:02d}",
                f"{d} {pick(MONTHS)} {y}", f"{pick(MONTHS)} {d}, {y}", f"{d}.{m}.{y}"]
    for _ in range(20):
        h, mi = R.randint(0, 23), R.randint(0, 59)
        out += [f"{h:02d}:{mi:02d}", f"{(h % 12) or 12}:{mi:02d} {'am' if h < 12 else 'pm'}",
                f"{h}h{mi:02d}", f"{h:02d}:{mi:02d}:{R.randint(0, 59):02d}"]
    for _ in range(20):
        v = R.randint(1, 99999) / 100
        out += [f"{v:.2f}", f"${v:,.2f}", f"£{v:.2f}", f"{v:.2f} €".replace(".", ","),
                f"-{v}", f"{R.randint(0, 100)}%", f"{R.randint(1, 9999):,}",
                f"{R.randint(1, 50)}-{R.randint(51, 100)}", f"{R.randint(1, 10)}/{R.randint(11, 20)}",
                f"{R.random() * 1000:.3e}", f"#{R.randint(1000, 99999)}", f"{R.randint(1, 9)}x{R.randint(1, 9)}"]
    for _ in range(15):
        out += [f"+44 {R.randint(20, 79)} {R.randint(1000, 9999)} {R.randint(1000, 9999)}",
                f"({R.randint(200, 999)}) {R.randint(200, 999)}-{R.randint(1000, 9999)}",
                f"+49 {R.randint(30, 89)} {R.randint(100000, 9999999)}",
                f"0{R.randint(6, 7)} {R.randint(10, 99)} {R.randint(10, 99)} {R.randint(10, 99)} {R.randint(10, 99)}",
                f"+81-{R.randint(3, 90)}-{R.randint(1000, 9999)}-{R.randint(1000, 9999)}"]
    return out


def addresses():
    out = []
    for _ in range(120):
        city, pc, country = pick(CITIES)
        num = R.randint(1, 250)
        street = pick(STREETS)
        flat = pick(["", f"Flat {R.randint(1, 30)}, ", f"Apt. {R.randint(1, 30)}, ", f"{R.randint(1, 5)}º {pick('ABCD')}, "])
        out.append(f"{flat}{num} {street}, {pc} {city}, {country}")
        out.append(f"{num} {street}")
        out.append(f"{street} {num}")
        if R.random() < 0.3:
            f, l = name()
            out.append(f"c/o {f.title()} {l.title()}, {num} {street}, {city}")
    return out


def contacts():
    out = []
    for _ in range(150):
        f, l = name()
        dom = pick(DOMAINS)
        out.append(pick([f"{f}.{l}@{dom}", f"{f[0]}{l}@{dom}", f"{f}+news@{dom}", f"{f}_{l}{R.randint(1, 99)}@{dom}",
                         f"{f.title()}.{l.title()}@{dom}", f"{l}.{f}@{dom}"]))
        out.append(pick([f"{f.title()} {l.title()} <{f}.{l}@{dom}>", f"\"{l.title()}, {f.title()}\" <{f}@{dom}>",
                         f"{f}{R.randint(1970, 2010)}", f"{f}_{l}", f"@{f}{l}", f"{f}.{l}", f"{f[0]}.{l}"]))
    return out


def misc_fields():
    out = []
    for _ in range(60):
        out.append(f"{pick(PRODUCTS)}-{R.randint(100, 999)}-{pick('ABCXYZ')}{R.randint(0, 9)}")
        out.append("".join(R.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(R.randint(6, 12))))
        out.append("%032x" % R.getrandbits(128))
        out.append(pick(BROWSERS).format(v=R.randint(100, 125), m=R.randint(0, 6)))
        out.append(f"sid={R.getrandbits(64):016x}; lang={pick(['en', 'fr', 'de', 'es'])}; theme={pick(['dark', 'light'])}")
        out.append(pick(["true", "false", "on", "off", "yes", "no", "0", "1", "null", "none", "N/A", "-", "?", "ok"]))
    return out


def main():
    for fname, lines in [("generated_numbers_dates.txt", numbers_dates()), ("generated_addresses.txt", addresses()),
                         ("generated_contacts.txt", contacts()), ("generated_misc_fields.txt", misc_fields())]:
        with open(os.path.join(HERE, "benign", fname), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(fname, len(lines))


if __name__ == "__main__":
    main()
