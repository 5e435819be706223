// A small corpus of company policies for the search example. Several documents mention
// remote work or reimbursement; exactly one covers both, and a second one points to it.

export interface Policy {
  id: string;
  title: string;
  updated: string;
  text: string;
}

export const policies: readonly Policy[] = [
  {
    id: "HR-210",
    title: "Remote Work Eligibility",
    updated: "2025-11-03",
    text:
      "Employees may work remotely up to three days a week with their manager's approval. Roles that require on-site equipment are not eligible for remote work. " +
      "Remote employees must be reachable during core hours, 10:00 to 15:00 local time. " +
      "Equipment and expense reimbursement for remote staff is not covered by this policy; see WFH-2024-REIMB.",
  },
  {
    id: "WFH-2024-REIMB",
    title: "Policy WFH-2024-REIMB",
    updated: "2024-09-15",
    text:
      "This policy sets out what the company pays for when employees work remotely. " +
      "Remote employees can claim reimbursement of home office expenses: a one-off equipment allowance of up to 600 USD and internet costs of up to 40 USD per month. " +
      "Claims for reimbursement are submitted through the expense system within 60 days, with receipts. " +
      "Coworking space fees are reimbursed only when pre-approved by the department head.",
  },
  {
    id: "FIN-300",
    title: "Travel Expense Reimbursement",
    updated: "2025-06-20",
    text:
      "Business travel must be booked through the travel portal. Reimbursement covers economy airfare, standard hotel rooms and meals up to the daily allowance. " +
      "Expenses are reimbursed after the trip report is approved. Personal travel combined with business trips is not reimbursed.",
  },
  {
    id: "SEC-120",
    title: "Remote Access Security",
    updated: "2025-02-11",
    text:
      "Remote work requires the company VPN and a managed laptop. Public Wi-Fi must not be used without the VPN. " +
      "Lost or stolen devices must be reported to security within 24 hours.",
  },
  {
    id: "HR-115",
    title: "Relocation Assistance",
    updated: "2024-04-02",
    text:
      "Employees relocating at the company's request receive reimbursement of moving costs up to 8,000 USD. " +
      "Temporary housing is covered for up to 30 days. Relocation for remote roles is not eligible.",
  },
  {
    id: "FIN-310",
    title: "Corporate Card Use",
    updated: "2025-08-30",
    text:
      "Corporate cards may be used for approved business expenses only. Personal expenses charged by mistake must be repaid within 30 days. " +
      "Card statements are reconciled monthly in the expense system.",
  },
  {
    id: "HR-400",
    title: "Working Hours and Overtime",
    updated: "2025-01-15",
    text:
      "Standard working hours are 40 per week. Overtime must be approved in advance and is compensated as time off or paid at 1.5 times the hourly rate.",
  },
  {
    id: "IT-050",
    title: "Equipment Loans",
    updated: "2025-05-09",
    text:
      "Laptops, monitors and headsets are loaned to employees and remain company property. Equipment must be returned when employment ends. " +
      "Employees working from home may borrow a monitor from the office.",
  },
  {
    id: "HR-220",
    title: "Hybrid Office Attendance",
    updated: "2025-10-01",
    text:
      "Teams agree on two anchor days a week in the office. Desk booking is required on other days. Hybrid schedules are reviewed each quarter.",
  },
  {
    id: "FIN-320",
    title: "Training and Education Funding",
    updated: "2025-03-14",
    text:
      "Approved courses and certifications are funded up to 2,000 USD a year. Tuition reimbursement requires a passing grade and repayment applies if the employee leaves within one year.",
  },
  {
    id: "LEG-010",
    title: "Data Protection at Home",
    updated: "2024-12-12",
    text:
      "When working from home, printed documents with personal data must be stored in a locked drawer and shredded after use. Screens must be locked when unattended.",
  },
  {
    id: "HR-500",
    title: "Parental Leave",
    updated: "2025-07-07",
    text: "Parents receive 16 weeks of paid leave, which can be taken in up to three blocks within the first two years.",
  },
];
